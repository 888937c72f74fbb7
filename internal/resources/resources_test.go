package resources

import (
	"errors"
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func container(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func sidecar(req corev1.ResourceList) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c := container(req, nil)
	c.RestartPolicy = &always
	return c
}

func TestPodRequests(t *testing.T) {
	cases := []struct {
		name string
		spec corev1.PodSpec
		want Requests
	}{
		{
			name: "containers add up",
			spec: corev1.PodSpec{Containers: []corev1.Container{container(rl("cpu", "1", "memory", "1Gi"), nil), container(rl("cpu", "500m"), nil)}},
			want: Requests{"cpu": 1500, "memory": 1024 * 1024 * 1024},
		},
		{
			name: "limit stands in for a missing request",
			spec: corev1.PodSpec{Containers: []corev1.Container{container(rl("cpu", "1"), rl("cpu", "2", "nvidia.com/gpu", "1"))}},
			want: Requests{"cpu": 1000, "nvidia.com/gpu": 1},
		},
		{
			name: "a large init container dominates",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container(rl("cpu", "4"), nil)},
				Containers:     []corev1.Container{container(rl("cpu", "1"), nil)},
			},
			want: Requests{"cpu": 4000},
		},
		{
			name: "sidecars run with the containers and with later init containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{sidecar(rl("cpu", "1")), container(rl("cpu", "2"), nil)},
				Containers:     []corev1.Container{container(rl("cpu", "1"), nil)},
			},
			// init phase: 1 (sidecar) + 2 = 3; running: 1 + 1 = 2.
			want: Requests{"cpu": 3000},
		},
		{
			name: "an init container before the sidecar runs alone",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container(rl("cpu", "2"), nil), sidecar(rl("cpu", "1"))},
				Containers:     []corev1.Container{container(rl("cpu", "3"), nil)},
			},
			want: Requests{"cpu": 4000},
		},
		{
			name: "overhead is added",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container(rl("cpu", "1"), nil)},
				Overhead:   rl("cpu", "250m"),
			},
			want: Requests{"cpu": 1250},
		},
		{
			name: "pod-level requests replace container sums",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container(rl("cpu", "1", "memory", "1Gi"), nil)},
				Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "3")},
			},
			want: Requests{"cpu": 3000, "memory": 1024 * 1024 * 1024},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodRequests(&tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for name, a := range tc.want {
				if got[name] != a {
					t.Errorf("%s = %d, want %d", name, got[name], a)
				}
			}
		})
	}
}

func TestPodSetRequestsCountsPodsAndExcludes(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{container(rl("cpu", "1", "example.com/ignored", "3"), nil)}}
	got, err := PodSetRequests(&spec, 4, []string{"example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	want := Requests{"cpu": 4000, "pods": 4}
	if len(got) != len(want) || got["cpu"] != want["cpu"] || got["pods"] != want["pods"] {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestFromQuantity(t *testing.T) {
	cases := []struct {
		name corev1.ResourceName
		q    string
		want Amount
	}{
		{"cpu", "1", 1000},
		{"cpu", "250m", 250},
		{"cpu", "0.5m", 1}, // rounds up
		{"cpu", "1e-9", 1},
		{"cpu", "4611686018427387904m", MaxAmount},
		{"memory", "1Ki", 1024},
		{"memory", "100Gi", 100 << 30},
		{"memory", "5Pi", 5 << 50},
		{"memory", "4Ei", MaxAmount},
		{"memory", "1500m", 2}, // fractions of a byte round up
		{"memory", "-4Ei", -MaxAmount},
		{"pods", "3", 3},
		{"nvidia.com/gpu", "2", 2},
		{"example.com/credits", "0.1", 1},
		{"memory", "0", 0},
	}
	for _, tc := range cases {
		got, err := FromQuantity(tc.name, resource.MustParse(tc.q))
		if err != nil || got != tc.want {
			t.Errorf("FromQuantity(%s, %s) = %d, %v; want %d", tc.name, tc.q, got, err, tc.want)
		}
	}
}

// TestFromQuantityRefusesWhatCannotBeCounted: beyond MaxAmount, in either
// sign, is an error naming the resource, never a saturated value.
func TestFromQuantityRefusesWhatCannotBeCounted(t *testing.T) {
	for _, tc := range []struct {
		name corev1.ResourceName
		q    string
	}{
		{"memory", "4Ei1"}, {"memory", "8Ei"}, {"memory", "1e31"}, {"memory", "-5Ei"},
		{"cpu", "4611686018427387905m"}, {"cpu", "5e15"}, {"pods", "1e19"},
		{"memory", "1e999999999"}, {"storage", "9223372036854775807"},
	} {
		q, err := resource.ParseQuantity(tc.q)
		if err != nil {
			continue // not a quantity (4Ei1): nothing to convert
		}
		a, err := FromQuantity(tc.name, q)
		var re *RangeError
		if !errors.As(err, &re) || re.Resource != tc.name {
			t.Errorf("FromQuantity(%s, %s) = %d, %v; want a RangeError", tc.name, tc.q, a, err)
			continue
		}
		if !strings.Contains(err.Error(), string(tc.name)) || !strings.Contains(err.Error(), "at most") {
			t.Errorf("message %q should name the resource and the limit", err)
		}
	}
}

func TestClampingArithmetic(t *testing.T) {
	if Add(Unlimited, 5) != Unlimited || Sub(Unlimited, 5) != Unlimited {
		t.Error("Unlimited stays Unlimited")
	}
	if got := Add(Max-1, 10); got != Max {
		t.Errorf("Add(Max-1, 10) = %d, want the clamp Max, not Unlimited", got)
	}
	if got := Add(MaxAmount, MaxAmount); got != Max {
		t.Errorf("Add(MaxAmount, MaxAmount) = %d, want Max", got)
	}
	if got := Add(-Max, -Max); got != -Max {
		t.Errorf("Add(-Max, -Max) = %d, want -Max", got)
	}
	if Sub(5, Unlimited) != -Max {
		t.Error("finite minus Unlimited is -Max")
	}
	if Mul(MaxAmount, 3) != Max || Mul(-MaxAmount, 3) != -Max || Mul(MaxAmount, -3) != -Max {
		t.Error("Mul must clamp at ±Max")
	}
	if Mul(math.MinInt64, -1) != Max || Mul(-1, math.MinInt64) != Max {
		t.Error("Mul must clamp the overflow of -MinInt64")
	}
	if Mul(7, 0) != 0 || Mul(0, Unlimited) != 0 {
		t.Error("Mul by zero is zero")
	}
}

func TestToQuantityRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name corev1.ResourceName
		q    string
		back string
	}{
		{"cpu", "1", "1"}, {"cpu", "250m", "250m"}, {"memory", "64Gi", "64Gi"}, {"memory", "3", "3"},
		{"memory", "5Pi", "5Pi"}, {"memory", "4Ei", "4Ei"}, {"pods", "110", "110"}, {"nvidia.com/gpu", "8", "8"},
		{"memory", "1G", "1G"},
	} {
		a, err := FromQuantity(tc.name, resource.MustParse(tc.q))
		if err != nil {
			t.Fatal(err)
		}
		back := ToQuantity(tc.name, a)
		if back.Cmp(resource.MustParse(tc.q)) != 0 {
			t.Errorf("%s %s came back as %s", tc.q, tc.name, back.String())
		}
	}
}

func TestPodRequestsRefusesWhatCannotBeCounted(t *testing.T) {
	for name, spec := range map[string]corev1.PodSpec{
		"one quantity": {Containers: []corev1.Container{container(rl("memory", "5Ei"), nil)}},
		"a limit":      {Containers: []corev1.Container{container(nil, rl("memory", "5Ei"))}},
		"the sum":      {Containers: []corev1.Container{container(rl("memory", "3Ei"), nil), container(rl("memory", "2Ei"), nil)}},
		"overhead":     {Containers: []corev1.Container{container(rl("memory", "3Ei"), nil)}, Overhead: rl("memory", "2Ei")},
	} {
		got, err := PodRequests(&spec)
		if err == nil || !strings.Contains(err.Error(), "memory") {
			t.Errorf("%s: got %v, %v; want an error naming memory", name, got, err)
			continue
		}
		if got["memory"] < MaxAmount {
			t.Errorf("%s: memory = %d, want at least MaxAmount so that it fits no quota", name, got["memory"])
		}
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{container(rl("memory", "2Ei"), nil)}}
	if _, err := PodSetRequests(&spec, 3, nil); err == nil {
		t.Error("3 pods of 2Ei cannot be counted")
	}
}
