package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestValidateWorkloadPodSets(t *testing.T) {
	ps0 := "spec.podSets[0]"
	ps1 := "spec.podSets[1]"
	tmpl := ps1 + ".template"
	workers := func(wl *kueue.Workload) *kueue.PodSet { return &wl.Spec.PodSets[1] }
	cases := map[string]struct {
		mut  func(*kueue.Workload)
		want []string
	}{
		"valid": {mut: func(*kueue.Workload) {}},
		"pods requested": {
			mut:  func(wl *kueue.Workload) { workers(wl).Template.Spec.Containers[0].Resources.Requests["pods"] = q("1") },
			want: []string{tmpl + ".spec.containers[0].resources.requests[pods]"},
		},
		"pods limited": {
			mut: func(wl *kueue.Workload) {
				workers(wl).Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"pods": q("1")}
			},
			want: []string{tmpl + ".spec.containers[0].resources.limits[pods]"},
		},
		"negative request": {
			mut:  func(wl *kueue.Workload) { workers(wl).Template.Spec.Containers[0].Resources.Requests["cpu"] = q("-1") },
			want: []string{tmpl + ".spec.containers[0].resources.requests[cpu]"},
		},
		"negative init container request": {
			mut: func(wl *kueue.Workload) {
				workers(wl).Template.Spec.InitContainers = []corev1.Container{{Name: "init",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("-1Gi")}}}}
			},
			want: []string{tmpl + ".spec.initContainers[0].resources.requests[memory]"},
		},
		"negative pod-level request": {
			mut: func(wl *kueue.Workload) {
				workers(wl).Template.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("-100m")}}
			},
			want: []string{tmpl + ".spec.resources.requests[cpu]"},
		},
		"negative overhead": {
			mut:  func(wl *kueue.Workload) { workers(wl).Template.Spec.Overhead = corev1.ResourceList{"cpu": q("-1m")} },
			want: []string{tmpl + ".spec.overhead[cpu]"},
		},
		"template label": {
			mut:  func(wl *kueue.Workload) { workers(wl).Template.Labels = map[string]string{"role": "a b"} },
			want: []string{tmpl + ".metadata.labels[role]"},
		},
		"template annotation": {
			mut:  func(wl *kueue.Workload) { workers(wl).Template.Annotations = map[string]string{"a/b/c": "x"} },
			want: []string{tmpl + ".metadata.annotations"},
		},
		"one minCount": {mut: func(wl *kueue.Workload) { workers(wl).MinCount = ptr.To[int32](2) }},
		"two minCounts": {
			mut: func(wl *kueue.Workload) {
				wl.Spec.PodSets[0].MinCount = ptr.To[int32](1)
				workers(wl).MinCount = ptr.To[int32](2)
			},
			want: []string{ps1 + ".minCount"},
		},
		"minCount on an elastic workload": {
			mut: func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{elasticJobAnnotation: "true"}
				wl.Spec.PodSets[0].MinCount = ptr.To[int32](1)
			},
			want: []string{ps0 + ".minCount"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkload(workload(tc.mut)), tc.want...)
		})
	}
}

func TestValidateWorkloadTopologyRequest(t *testing.T) {
	tr := "spec.podSets[1].topologyRequest"
	layer := func(size int32) kueue.PodsetSliceRequiredTopologyConstraint {
		return kueue.PodsetSliceRequiredTopologyConstraint{Topology: "rack", Size: size}
	}
	cases := map[string]struct {
		req  kueue.PodSetTopologyRequest
		want []string
	}{
		"required only":  {req: kueue.PodSetTopologyRequest{Required: ptr.To("rack")}},
		"slice":          {req: kueue.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](2)}},
		"multi-layer":    {req: kueue.PodSetTopologyRequest{PodsetSliceRequiredTopologyConstraints: []kueue.PodsetSliceRequiredTopologyConstraint{layer(4), layer(2), layer(1)}}},
		"slice, no size": {req: kueue.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack")}, want: []string{tr + ".podSetSliceSize"}},
		"size, no slice": {req: kueue.PodSetTopologyRequest{PodSetSliceSize: ptr.To[int32](2)}, want: []string{tr + ".podSetSliceSize"}},
		"size above count": {
			req:  kueue.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](5)},
			want: []string{tr + ".podSetSliceSize"},
		},
		"multi-layer with a single slice": {
			req: kueue.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](2),
				PodsetSliceRequiredTopologyConstraints: []kueue.PodsetSliceRequiredTopologyConstraint{layer(2)}},
			want: []string{tr + ".podsetSliceRequiredTopologyConstraints"},
		},
		"inner layer not dividing the outer one": {
			req:  kueue.PodSetTopologyRequest{PodsetSliceRequiredTopologyConstraints: []kueue.PodsetSliceRequiredTopologyConstraint{layer(4), layer(3)}},
			want: []string{tr + ".podsetSliceRequiredTopologyConstraints[1].size"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wl := workload(func(wl *kueue.Workload) { wl.Spec.PodSets[1].TopologyRequest = &tc.req })
			expectPaths(t, ValidateWorkload(wl), tc.want...)
		})
	}
}

func TestValidateWorkloadSpecUpdate(t *testing.T) {
	elasticReserved := reservedWorkload(func(wl *kueue.Workload) {
		wl.Annotations = map[string]string{elasticJobAnnotation: "true"}
	})
	legacy := workload(func(wl *kueue.Workload) {
		wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests["pods"] = q("1")
	})
	cases := map[string]struct {
		old  *kueue.Workload
		mut  func(*kueue.Workload)
		want []string
	}{
		"podSets changed without a reservation": {
			old: workload(),
			mut: func(wl *kueue.Workload) { wl.Spec.PodSets[1].Count = 8 },
		},
		"changed podSets are validated": {
			old: workload(),
			mut: func(wl *kueue.Workload) {
				wl.Spec.PodSets[1].Template.Spec.Containers[0].Resources.Requests["cpu"] = q("-1")
			},
			want: []string{"spec.podSets[1].template.spec.containers[0].resources.requests[cpu]"},
		},
		"other spec fields of an invalid stored workload": {
			old: legacy,
			mut: func(wl *kueue.Workload) { wl.Spec.Active = ptr.To(false) },
		},
		"podSets changed while reserved": {
			old: reservedWorkload(),
			mut: func(wl *kueue.Workload) {
				wl.Spec.PodSets[1].Template.Spec.Containers[0].Resources.Requests["cpu"] = q("1")
			},
			want: []string{"spec.podSets[1]"},
		},
		"podSet count lowered while reserved": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { wl.Spec.PodSets[1].Count = 2 },
			want: []string{"spec.podSets[1]"},
		},
		"podSet added while reserved": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { wl.Spec.PodSets = append(wl.Spec.PodSets, podSet("extra", 1, nil)) },
			want: []string{"spec.podSets"},
		},
		"elastic workload shrinks while reserved": {
			old: elasticReserved,
			mut: func(wl *kueue.Workload) { wl.Spec.PodSets[1].Count = 2 },
		},
		"elastic workload grows while reserved": {
			old:  elasticReserved,
			mut:  func(wl *kueue.Workload) { wl.Spec.PodSets[1].Count = 6 },
			want: []string{"spec.podSets[1]"},
		},
		"podSets changed as the reservation is cleared": {
			old: reservedWorkload(),
			mut: func(wl *kueue.Workload) {
				wl.Status.Admission = nil
				setCondition(wl, kueue.WorkloadQuotaReserved, "False")
				wl.Spec.PodSets[1].Count = 2
			},
		},
		"admission gate removed": {
			old: workload(func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{admissionGatedByAnnotation: "example.com/a, example.com/b"}
			}),
			mut: func(wl *kueue.Workload) { wl.Annotations[admissionGatedByAnnotation] = "example.com/b" },
		},
		"all admission gates removed": {
			old: workload(func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{admissionGatedByAnnotation: "example.com/a"}
			}),
			mut: func(wl *kueue.Workload) { delete(wl.Annotations, admissionGatedByAnnotation) },
		},
		"admission gate added": {
			old: workload(func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{admissionGatedByAnnotation: "example.com/a"}
			}),
			mut:  func(wl *kueue.Workload) { wl.Annotations[admissionGatedByAnnotation] = "example.com/a,example.com/c" },
			want: []string{"metadata.annotations[" + admissionGatedByAnnotation + "]"},
		},
		"admission gates added after creation": {
			old: workload(),
			mut: func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{admissionGatedByAnnotation: "example.com/a"}
			},
			want: []string{"metadata.annotations[" + admissionGatedByAnnotation + "]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkloadUpdate(tc.old, changed(tc.old, tc.mut)), tc.want...)
		})
	}
	t.Run("admission gates set at creation", func(t *testing.T) {
		wl := workload(func(wl *kueue.Workload) {
			wl.Annotations = map[string]string{admissionGatedByAnnotation: "example.com/a"}
		})
		expectPaths(t, ValidateWorkload(wl))
	})
}
