package resources

import (
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
			want: Requests{"cpu": 1500, "memory": 1024 * 1024 * 1024 * 1000},
		},
		{
			name: "limit stands in for a missing request",
			spec: corev1.PodSpec{Containers: []corev1.Container{container(rl("cpu", "1"), rl("cpu", "2", "nvidia.com/gpu", "1"))}},
			want: Requests{"cpu": 1000, "nvidia.com/gpu": 1000},
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
			want: Requests{"cpu": 3000, "memory": 1024 * 1024 * 1024 * 1000},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PodRequests(&tc.spec)
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
	got := PodSetRequests(&spec, 4, []string{"example.com/"})
	want := Requests{"cpu": 4000, "pods": 4000}
	if len(got) != len(want) || got["cpu"] != want["cpu"] || got["pods"] != want["pods"] {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestFromQuantity(t *testing.T) {
	cases := map[string]Amount{
		"1":     1000,
		"250m":  250,
		"1Ki":   1024 * 1000,
		"0.5m":  1, // rounds up
		"1E":    Unlimited,
		"-1E":   -Unlimited,
		"100Gi": 100 * 1024 * 1024 * 1024 * 1000,
	}
	for s, want := range cases {
		if got := FromQuantity(resource.MustParse(s)); got != want {
			t.Errorf("FromQuantity(%s) = %d, want %d", s, got, want)
		}
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	if Add(Unlimited, 5) != Unlimited || Add(Unlimited-1, 10) != Unlimited {
		t.Error("Add must saturate at Unlimited")
	}
	if Sub(Unlimited, 5) != Unlimited {
		t.Error("Unlimited minus a finite amount stays Unlimited")
	}
	if Sub(5, Unlimited) != -Unlimited {
		t.Error("finite minus Unlimited is -Unlimited")
	}
	if Mul(Unlimited/2, 3) != Unlimited {
		t.Error("Mul must saturate")
	}
	if Mul(7, 0) != 0 || Mul(0, Unlimited) != 0 {
		t.Error("Mul by zero is zero")
	}
}

func TestToQuantityRoundTrips(t *testing.T) {
	for _, s := range []string{"1", "250m", "64Gi", "3"} {
		q := resource.MustParse(s)
		back := ToQuantity("memory", FromQuantity(q))
		if back.Cmp(q) != 0 {
			t.Errorf("%s came back as %s", s, back.String())
		}
	}
}
