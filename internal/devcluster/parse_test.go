package devcluster

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseLabels(t *testing.T) {
	tests := []struct {
		name    string
		items   []string
		want    map[string]string
		wantErr string
	}{
		{name: "empty", items: nil, want: map[string]string{}},
		{name: "blank items skipped", items: []string{" ", ""}, want: map[string]string{}},
		{
			name:  "plain and prefixed keys",
			items: []string{"tier=gold", "topology.kubernetes.io/zone=zone-a", "empty="},
			want:  map[string]string{"tier": "gold", "topology.kubernetes.io/zone": "zone-a", "empty": ""},
		},
		{name: "same value twice", items: []string{"a=b", "a=b"}, want: map[string]string{"a": "b"}},
		{name: "no equals", items: []string{"tier"}, wantErr: `invalid label "tier": want key=value`},
		{name: "bad key", items: []string{"bad key=x"}, wantErr: `invalid label key "bad key"`},
		{name: "bad prefix", items: []string{"Not_A_Domain/x=y"}, wantErr: `invalid label key "Not_A_Domain/x"`},
		{name: "empty key", items: []string{"=x"}, wantErr: `invalid label key ""`},
		{name: "bad value", items: []string{"a=b c"}, wantErr: `invalid value "b c" for label "a"`},
		{name: "long value", items: []string{"a=" + strings.Repeat("v", 64)}, wantErr: "must be no more than 63"},
		{name: "conflict", items: []string{"a=b", "a=c"}, wantErr: `label "a" is given twice, as "b" and "c"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLabels(tc.items)
			if !errorMatches(err, tc.wantErr) {
				t.Fatalf("ParseLabels(%q) error = %v, want one containing %q", tc.items, err, tc.wantErr)
			}
			if tc.wantErr == "" && !maps.Equal(got, tc.want) {
				t.Errorf("ParseLabels(%q) = %v, want %v", tc.items, got, tc.want)
			}
		})
	}
}

func TestParseResources(t *testing.T) {
	tests := []struct {
		name    string
		list    string
		want    corev1.ResourceList
		wantErr string
	}{
		{name: "empty", list: "", want: corev1.ResourceList{}},
		{
			name: "several",
			list: "cpu=64, memory=512Gi,nvidia.com/gpu=8,pods=0",
			want: corev1.ResourceList{
				"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"),
				"nvidia.com/gpu": resource.MustParse("8"), "pods": resource.MustParse("0"),
			},
		},
		{name: "no equals", list: "cpu", wantErr: `invalid resource "cpu": want name=quantity`},
		{name: "bad quantity", list: "cpu=lots", wantErr: `invalid quantity "lots" for resource "cpu"`},
		{name: "negative", list: "cpu=-1", wantErr: "must not be negative"},
		{name: "bad name", list: "a b=1", wantErr: `invalid resource name "a b"`},
		{name: "twice", list: "cpu=1,cpu=2", wantErr: `resource "cpu" is given twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseResources(tc.list)
			if !errorMatches(err, tc.wantErr) {
				t.Fatalf("ParseResources(%q) error = %v, want one containing %q", tc.list, err, tc.wantErr)
			}
			if tc.wantErr == "" && !sameResources(got, tc.want) {
				t.Errorf("ParseResources(%q) = %v, want %v", tc.list, got, tc.want)
			}
		})
	}
}

func TestParseNodeGroup(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		want    NodeGroup
		wantErr string
	}{
		{name: "name and count", spec: "cpu:3", want: NodeGroup{Name: "cpu", Count: 3}},
		{
			name: "labels",
			spec: "gpu:2:accelerator=a100,zone=b",
			want: NodeGroup{Name: "gpu", Count: 2, Labels: map[string]string{"accelerator": "a100", "zone": "b"}},
		},
		{
			name: "labels and resources",
			spec: "gpu:2:accelerator=a100:cpu=64,nvidia.com/gpu=8",
			want: NodeGroup{
				Name: "gpu", Count: 2, Labels: map[string]string{"accelerator": "a100"},
				Resources: corev1.ResourceList{"cpu": resource.MustParse("64"), "nvidia.com/gpu": resource.MustParse("8")},
			},
		},
		{
			name: "resources only",
			spec: "big:1::memory=1Ti",
			want: NodeGroup{Name: "big", Count: 1, Labels: map[string]string{}, Resources: corev1.ResourceList{"memory": resource.MustParse("1Ti")}},
		},
		{name: "name only", spec: "gpu", wantErr: "want NAME:COUNT[:LABELS[:RESOURCES]]"},
		{name: "too many parts", spec: "a:1:b=c:cpu=1:x", wantErr: "want NAME:COUNT[:LABELS[:RESOURCES]]"},
		{name: "bad name", spec: "GPU:1", wantErr: `name "GPU"`},
		{name: "empty name", spec: ":1", wantErr: `name "": must not be empty`},
		{name: "bad count", spec: "gpu:two", wantErr: `count "two" must be a positive integer`},
		{name: "zero count", spec: "gpu:0", wantErr: `count "0" must be a positive integer`},
		{name: "bad label", spec: "gpu:1:accelerator", wantErr: `invalid label "accelerator": want key=value`},
		{name: "bad resource", spec: "gpu:1::cpu=x", wantErr: `invalid quantity "x" for resource "cpu"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNodeGroup(tc.spec)
			if !errorMatches(err, tc.wantErr) {
				t.Fatalf("ParseNodeGroup(%q) error = %v, want one containing %q", tc.spec, err, tc.wantErr)
			}
			if tc.wantErr != "" {
				if !strings.Contains(err.Error(), tc.spec) {
					t.Errorf("error %q does not quote the spec %q", err, tc.spec)
				}
				return
			}
			if got.Name != tc.want.Name || got.Count != tc.want.Count ||
				!maps.Equal(got.Labels, tc.want.Labels) || !sameResources(got.Resources, tc.want.Resources) {
				t.Errorf("ParseNodeGroup(%q) = %+v, want %+v", tc.spec, got, tc.want)
			}
		})
	}
}

// errorMatches reports whether err is nil when want is empty, or contains want.
func errorMatches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}
