package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestTransform(t *testing.T) {
	credits := Transformation{Input: corev1.ResourceCPU, Outputs: Requests{"cpu_credits": 1}}
	mig := Transformation{Input: "nvidia.com/mig-1g.5gb", Replace: true, Outputs: Requests{"example.com/gpu-memory": 5}}
	slices := Transformation{Input: "example.com/slice", MultiplyBy: "example.com/slice-size", Outputs: Requests{"example.com/chips": 1}}
	ignore := Transformation{Input: "example.com/ignored", Replace: true}
	for name, tc := range map[string]struct {
		in   Requests
		ts   []Transformation
		want Requests
	}{
		"nothing applies":          {Requests{"memory": 5}, []Transformation{credits}, Requests{"memory": 5}},
		"retain adds outputs":      {Requests{"cpu": 3000, "memory": 7}, []Transformation{credits}, Requests{"cpu": 3000, "cpu_credits": 3, "memory": 7}},
		"fractions round up":       {Requests{"cpu": 500}, []Transformation{credits}, Requests{"cpu": 500, "cpu_credits": 1}},
		"replace drops the input":  {Requests{"nvidia.com/mig-1g.5gb": 2}, []Transformation{mig}, Requests{"example.com/gpu-memory": 10}},
		"outputs add up":           {Requests{"cpu": 2000, "cpu_credits": 1}, []Transformation{credits}, Requests{"cpu": 2000, "cpu_credits": 3}},
		"multiplied by another":    {Requests{"example.com/slice": 2, "example.com/slice-size": 4}, []Transformation{slices}, Requests{"example.com/slice": 8, "example.com/slice-size": 4, "example.com/chips": 8}},
		"multiplier not requested": {Requests{"example.com/slice": 2}, []Transformation{slices}, Requests{"example.com/slice": 2, "example.com/chips": 2}},
		"empty replace ignores":    {Requests{"example.com/ignored": 1, "cpu": 1}, []Transformation{ignore}, Requests{"cpu": 1}},
	} {
		got := Transform(tc.in, tc.ts)
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: got %v, want %v", name, got, tc.want)
				break
			}
		}
	}
}
