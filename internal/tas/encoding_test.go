package tas

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func dom(count int32, values ...string) Domain { return Domain{Values: values, Count: count} }

func TestEncodeRoundTrip(t *testing.T) {
	host := []string{corev1.LabelHostname}
	three := []string{"block", "rack", "host"}
	many := make([]Domain, 2500)
	for i := range many {
		many[i] = dom(int32(i%3+1), fmt.Sprintf("b%d", i), "r", fmt.Sprintf("h%d", i))
	}
	cases := []struct {
		name    string
		levels  []string
		domains []Domain
		want    string // JSON of the assignment, when the shape matters
	}{
		{name: "none", levels: host, want: `{"levels":["kubernetes.io/hostname"],"slices":[]}`},
		{name: "one host", levels: host, domains: []Domain{dom(3, "node-1")},
			want: `{"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"node-1"}],"podCounts":{"universal":3}}]}`},
		{name: "hosts share prefix and suffix", levels: host,
			domains: []Domain{dom(2, "gke-pool-a1-x"), dom(2, "gke-pool-b22-x"), dom(2, "gke-pool-c3-x")},
			want:    `{"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":3,"valuesPerLevel":[{"individual":{"prefix":"gke-pool-","suffix":"-x","roots":["a1","b22","c3"]}}],"podCounts":{"universal":2}}]}`},
		{name: "roots stay non-empty", levels: host,
			domains: []Domain{dom(1, "node-1"), dom(2, "node-12")},
			want:    `{"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":2,"valuesPerLevel":[{"individual":{"prefix":"node-","roots":["1","12"]}}],"podCounts":{"individual":[1,2]}}]}`},
		{name: "one slice per rack", levels: three,
			domains: []Domain{dom(4, "b1", "r1", "h1"), dom(4, "b1", "r1", "h2"), dom(1, "b1", "r2", "h3")},
			want: `{"levels":["block","rack","host"],"slices":[` +
				`{"domainCount":2,"valuesPerLevel":[{"universal":"b1"},{"universal":"r1"},{"individual":{"prefix":"h","roots":["1","2"]}}],"podCounts":{"universal":4}},` +
				`{"domainCount":1,"valuesPerLevel":[{"universal":"b1"},{"universal":"r2"},{"universal":"h3"}],"podCounts":{"universal":1}}]}`},
		{name: "empty values", levels: []string{"a", "b"}, domains: []Domain{dom(1, "", ""), dom(1, "", "x"), dom(1, "y", "")}},
		{name: "same value twice", levels: host, domains: []Domain{dom(1, "n"), dom(1, "n")}},
		{name: "more racks than slices", levels: three, domains: many},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Encode(tc.levels, tc.domains)
			if tc.want != "" {
				got, _ := json.Marshal(a)
				if string(got) != tc.want {
					t.Errorf("Encode:\n got %s\nwant %s", got, tc.want)
				}
			}
			if len(a.Slices) > maxSlices {
				t.Errorf("%d slices", len(a.Slices))
			}
			back, err := Domains(a)
			if err != nil {
				t.Fatalf("Domains: %v", err)
			}
			if len(back) != len(tc.domains) || (len(back) > 0 && !reflect.DeepEqual(back, tc.domains)) {
				t.Errorf("round trip:\n got %v\nwant %v", back, tc.domains)
			}
		})
	}
}

func TestDomainsErrors(t *testing.T) {
	one := func(v string) kueue.TopologyAssignmentSliceLevelValues {
		return kueue.TopologyAssignmentSliceLevelValues{Universal: &v}
	}
	roots := func(r ...string) kueue.TopologyAssignmentSliceLevelValues {
		return kueue.TopologyAssignmentSliceLevelValues{Individual: &kueue.TopologyAssignmentSliceLevelIndividualValues{Roots: r}}
	}
	n := func(c int32) *int32 { return &c }
	good := kueue.TopologyAssignmentSlice{DomainCount: 1, ValuesPerLevel: []kueue.TopologyAssignmentSliceLevelValues{one("a")},
		PodCounts: kueue.TopologyAssignmentSlicePodCounts{Universal: n(1)}}
	cases := []struct {
		name  string
		slice kueue.TopologyAssignmentSlice
		want  string
	}{
		{"no domains", kueue.TopologyAssignmentSlice{ValuesPerLevel: good.ValuesPerLevel, PodCounts: good.PodCounts},
			"slices[1].domainCount: 0, want 1 to 100000"},
		{"levels", kueue.TopologyAssignmentSlice{DomainCount: 1, PodCounts: good.PodCounts},
			"slices[1].valuesPerLevel: 0 entries, 1 levels"},
		{"both values", kueue.TopologyAssignmentSlice{DomainCount: 1, PodCounts: good.PodCounts,
			ValuesPerLevel: []kueue.TopologyAssignmentSliceLevelValues{{Universal: n2s("a"), Individual: roots("b").Individual}}},
			"slices[1].valuesPerLevel[0]: set exactly one of universal and individual"},
		{"roots", kueue.TopologyAssignmentSlice{DomainCount: 2, PodCounts: good.PodCounts,
			ValuesPerLevel: []kueue.TopologyAssignmentSliceLevelValues{roots("a", "b", "c")}},
			"slices[1].valuesPerLevel[0].individual.roots: 3 entries, domainCount 2"},
		{"counts", kueue.TopologyAssignmentSlice{DomainCount: 4, ValuesPerLevel: []kueue.TopologyAssignmentSliceLevelValues{one("a")},
			PodCounts: kueue.TopologyAssignmentSlicePodCounts{Individual: []int32{1, 2, 3}}},
			"slices[1].podCounts.individual: 3 entries, domainCount 4"},
		{"zero count", kueue.TopologyAssignmentSlice{DomainCount: 1, ValuesPerLevel: good.ValuesPerLevel,
			PodCounts: kueue.TopologyAssignmentSlicePodCounts{Universal: n(0)}},
			"slices[1].podCounts.universal: 0, want at least 1"},
		{"no counts", kueue.TopologyAssignmentSlice{DomainCount: 1, ValuesPerLevel: good.ValuesPerLevel},
			"slices[1].podCounts: set exactly one of universal and individual"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &kueue.TopologyAssignment{Levels: []string{"x"}, Slices: []kueue.TopologyAssignmentSlice{good, tc.slice}}
			_, err := Domains(a)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Domains(&kueue.TopologyAssignment{}); err == nil {
		t.Error("no levels: want an error")
	}
	if d, err := Domains(nil); d != nil || err != nil {
		t.Errorf("nil: got %v, %v", d, err)
	}
}

func n2s(s string) *string { return &s }

func TestAssignmentLevels(t *testing.T) {
	if got := AssignmentLevels([]string{"block", corev1.LabelHostname}); !reflect.DeepEqual(got, []string{corev1.LabelHostname}) {
		t.Errorf("hostname lowest: got %v", got)
	}
	if got := AssignmentLevels([]string{"block", "rack"}); !reflect.DeepEqual(got, []string{"block", "rack"}) {
		t.Errorf("no hostname: got %v", got)
	}
}

// FuzzDomains decodes arbitrary assignments (never panicking) and checks that
// whatever decodes, and any list of domains, survives Encode then Domains.
func FuzzDomains(f *testing.F) {
	f.Add([]byte("\x02\x03abc\x01\x00xy\x05"))
	f.Add([]byte("\x01\x09\xff\x10node-1node-2\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := bytesReader{data: data}
		a := b.assignment()
		if got, err := Domains(a); err == nil && len(got) > 0 {
			checkRoundTrip(t, a.Levels, got)
		}
		b = bytesReader{data: data}
		levels := make([]string, 1+b.next()%3)
		for i := range levels {
			levels[i] = fmt.Sprint("l", i)
		}
		domains := make([]Domain, b.next()%20)
		for i := range domains {
			domains[i].Count = int32(1 + b.next()%5)
			for range levels {
				domains[i].Values = append(domains[i].Values, b.str())
			}
		}
		checkRoundTrip(t, levels, domains)
	})
}

func checkRoundTrip(t *testing.T, levels []string, domains []Domain) {
	t.Helper()
	back, err := Domains(Encode(levels, domains))
	if err != nil {
		t.Fatalf("Domains(Encode(%v)): %v", domains, err)
	}
	if len(back) != len(domains) || (len(back) > 0 && !reflect.DeepEqual(back, domains)) {
		t.Fatalf("round trip:\n got %v\nwant %v", back, domains)
	}
}

// bytesReader turns fuzz input into small values; it yields zeros once drained.
type bytesReader struct {
	data []byte
}

func (b *bytesReader) next() int {
	if len(b.data) == 0 {
		return 0
	}
	v := int(b.data[0])
	b.data = b.data[1:]
	return v
}

func (b *bytesReader) str() string {
	n := min(b.next()%6, len(b.data))
	s := string(b.data[:n])
	b.data = b.data[n:]
	return strings.ToValidUTF8(s, "?")
}

func (b *bytesReader) assignment() *kueue.TopologyAssignment {
	a := &kueue.TopologyAssignment{Levels: make([]string, b.next()%4)}
	for i := range a.Levels {
		a.Levels[i] = b.str()
	}
	for range b.next() % 4 {
		s := kueue.TopologyAssignmentSlice{DomainCount: int32(b.next()%5) - 1}
		for range b.next() % 4 {
			var v kueue.TopologyAssignmentSliceLevelValues
			switch b.next() % 3 {
			case 0:
				v.Universal = n2s(b.str())
			case 1:
				v.Individual = &kueue.TopologyAssignmentSliceLevelIndividualValues{Prefix: n2s(b.str())}
				for range b.next() % 5 {
					v.Individual.Roots = append(v.Individual.Roots, b.str())
				}
			}
			s.ValuesPerLevel = append(s.ValuesPerLevel, v)
		}
		switch b.next() % 3 {
		case 0:
			c := int32(b.next()%4) - 1
			s.PodCounts.Universal = &c
		case 1:
			for range b.next() % 5 {
				s.PodCounts.Individual = append(s.PodCounts.Individual, int32(b.next()%4)-1)
			}
		}
		a.Slices = append(a.Slices, s)
	}
	return a
}
