package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestValidateWorkloadCreateStatus(t *testing.T) {
	cases := map[string]struct {
		mut  func(*kueue.Workload)
		want []string
	}{
		"reserved": {mut: func(wl *kueue.Workload) {
			wl.Status.Admission = admissionFor()
			setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue)
		}},
		"admission without QuotaReserved": {
			mut:  func(wl *kueue.Workload) { wl.Status.Admission = admissionFor() },
			want: []string{"status.admission"},
		},
		"QuotaReserved without admission": {
			mut:  func(wl *kueue.Workload) { setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue) },
			want: []string{"status.admission"},
		},
		"reclaimable pods on create": {
			mut: func(wl *kueue.Workload) {
				wl.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "workers", Count: 5}}
			},
			want: []string{"status.reclaimablePods[0].count"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkload(workload(tc.mut)), tc.want...)
		})
	}
}

// TestValidateAdmissionSet covers an update that reserves quota.
func TestValidateAdmissionSet(t *testing.T) {
	psa := "status.admission.podSetAssignments"
	reserve := func(mut func(*kueue.Admission)) func(*kueue.Workload) {
		return func(wl *kueue.Workload) {
			wl.Status.Admission = admissionFor()
			mut(wl.Status.Admission)
			setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue)
		}
	}
	cases := map[string]struct {
		mut  func(*kueue.Workload)
		want []string
	}{
		"valid":             {mut: reserve(func(*kueue.Admission) {})},
		"partial admission": {mut: reserve(func(a *kueue.Admission) { a.PodSetAssignments[1].Count = ptr.To[int32](2) })},
		"admission with QuotaReserved=False": {
			mut: func(wl *kueue.Workload) {
				wl.Status.Admission = admissionFor()
				setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse)
			},
			want: []string{"status.admission"},
		},
		"QuotaReserved=True without admission": {
			mut:  func(wl *kueue.Workload) { setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue) },
			want: []string{"status.admission"},
		},
		"no ClusterQueue": {
			mut:  reserve(func(a *kueue.Admission) { a.ClusterQueue = "" }),
			want: []string{"status.admission.clusterQueue"},
		},
		"unknown PodSet": {
			mut:  reserve(func(a *kueue.Admission) { a.PodSetAssignments[0].Name = "main" }),
			want: []string{psa + "[0].name"},
		},
		"count above the PodSet's": {
			mut:  reserve(func(a *kueue.Admission) { a.PodSetAssignments[1].Count = ptr.To[int32](5) }),
			want: []string{psa + "[1].count"},
		},
		"usage not divisible by count": {
			mut: reserve(func(a *kueue.Admission) {
				a.PodSetAssignments[1].ResourceUsage["cpu"] = q("2001m")
				a.PodSetAssignments[1].ResourceUsage["memory"] = q("4G")
			}),
			want: []string{psa + "[1].resourceUsage[cpu]"},
		},
		"usage of zero pods": {mut: reserve(func(a *kueue.Admission) {
			a.PodSetAssignments[1].Count = ptr.To[int32](0)
			a.PodSetAssignments[1].ResourceUsage = nil
		})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := workload()
			expectPaths(t, ValidateWorkloadUpdate(old, changed(old, tc.mut)), tc.want...)
		})
	}
}

func TestValidateAdmissionUpdate(t *testing.T) {
	psa := "status.admission.podSetAssignments"
	elastic := func(wl *kueue.Workload) { wl.Annotations = map[string]string{elasticJobAnnotation: "true"} }
	cases := map[string]struct {
		old  *kueue.Workload
		mut  func(*kueue.Workload)
		want []string
	}{
		"cleared with QuotaReserved=False": {
			old: reservedWorkload(),
			mut: func(wl *kueue.Workload) {
				wl.Status.Admission = nil
				setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse)
			},
		},
		"cleared, QuotaReserved still True": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { wl.Status.Admission = nil },
			want: []string{"status.admission"},
		},
		"QuotaReserved=False, admission kept": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse) },
			want: []string{"status.admission"},
		},
		"stored inconsistency carried over": {
			old: workload(func(wl *kueue.Workload) { wl.Status.Admission = admissionFor() }),
			mut: func(wl *kueue.Workload) { setCondition(wl, kueue.WorkloadRequeued, metav1.ConditionTrue) },
		},
		"ClusterQueue changed": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { wl.Status.Admission.ClusterQueue = "other" },
			want: []string{"status.admission.clusterQueue"},
		},
		"flavor changed": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { wl.Status.Admission.PodSetAssignments[1].Flavors["cpu"] = "b" },
			want: []string{psa + "[1]"},
		},
		"assignment removed": {
			old: reservedWorkload(),
			mut: func(wl *kueue.Workload) {
				wl.Status.Admission.PodSetAssignments = wl.Status.Admission.PodSetAssignments[:1]
			},
			want: []string{psa},
		},
		"assignments reordered": {
			old: reservedWorkload(),
			mut: func(wl *kueue.Workload) {
				a := wl.Status.Admission.PodSetAssignments
				a[0], a[1] = a[1], a[0]
			},
		},
		"topology assignment filled in": {
			old: reservedWorkload(func(wl *kueue.Workload) {
				wl.Status.Admission.PodSetAssignments[1].DelayedTopologyRequest = ptr.To(kueue.DelayedTopologyRequestStatePending)
			}),
			mut: func(wl *kueue.Workload) {
				p := &wl.Status.Admission.PodSetAssignments[1]
				p.DelayedTopologyRequest = ptr.To(kueue.DelayedTopologyRequestStateReady)
				p.TopologyAssignment = &kueue.TopologyAssignment{Levels: []string{"kubernetes.io/hostname"},
					Slices: []kueue.TopologyAssignmentSlice{{DomainCount: 1,
						ValuesPerLevel: []kueue.TopologyAssignmentSliceLevelValues{{Universal: ptr.To("node-1")}},
						PodCounts:      kueue.TopologyAssignmentSlicePodCounts{Universal: ptr.To[int32](4)}}}}
			},
		},
		"count lowered": {
			old:  reservedWorkload(),
			mut:  func(wl *kueue.Workload) { wl.Status.Admission.PodSetAssignments[1].Count = ptr.To[int32](3) },
			want: []string{psa + "[1]"},
		},
		"elastic count lowered": {
			old: reservedWorkload(elastic),
			mut: func(wl *kueue.Workload) {
				p := &wl.Status.Admission.PodSetAssignments[1]
				p.Count = ptr.To[int32](2)
				p.ResourceUsage = corev1.ResourceList{"cpu": q("1"), "memory": q("2Gi")}
			},
		},
		"elastic count raised": {
			old:  reservedWorkload(elastic, func(wl *kueue.Workload) { wl.Status.Admission.PodSetAssignments[1].Count = ptr.To[int32](2) }),
			mut:  func(wl *kueue.Workload) { wl.Status.Admission.PodSetAssignments[1].Count = ptr.To[int32](3) },
			want: []string{psa + "[1]"},
		},
		"replaced over a stored inconsistency": {
			old: workload(func(wl *kueue.Workload) {
				wl.Status.Admission = admissionFor()
				wl.Status.Admission.ClusterQueue = "old"
			}),
			mut: func(wl *kueue.Workload) {
				wl.Status.Admission = admissionFor()
				setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkloadUpdate(tc.old, changed(tc.old, tc.mut)), tc.want...)
		})
	}
}

func TestValidateReclaimablePods(t *testing.T) {
	rp := func(name kueue.PodSetReference, count int32) kueue.ReclaimablePod {
		return kueue.ReclaimablePod{Name: name, Count: count}
	}
	withReclaim := func(pods ...kueue.ReclaimablePod) func(*kueue.Workload) {
		return func(wl *kueue.Workload) { wl.Status.ReclaimablePods = pods }
	}
	cases := map[string]struct {
		old  *kueue.Workload
		mut  func(*kueue.Workload)
		want []string
	}{
		"set":       {old: reservedWorkload(), mut: withReclaim(rp("workers", 2))},
		"raised":    {old: reservedWorkload(withReclaim(rp("workers", 2))), mut: withReclaim(rp("workers", 4))},
		"unchanged": {old: reservedWorkload(withReclaim(rp("workers", 2))), mut: func(wl *kueue.Workload) { wl.Labels = map[string]string{"a": "b"} }},
		"unknown PodSet": {
			old: reservedWorkload(), mut: withReclaim(rp("main", 1)),
			want: []string{"status.reclaimablePods[0].name"},
		},
		"above the PodSet's count": {
			old: reservedWorkload(), mut: withReclaim(rp("driver", 0), rp("workers", 5)),
			want: []string{"status.reclaimablePods[1].count"},
		},
		"lowered while reserved": {
			old: reservedWorkload(withReclaim(rp("workers", 3))), mut: withReclaim(rp("workers", 1)),
			want: []string{"status.reclaimablePods[0].count"},
		},
		"removed while reserved": {
			old: reservedWorkload(withReclaim(rp("workers", 3))), mut: withReclaim(),
			want: []string{"status.reclaimablePods"},
		},
		"zero entry removed while reserved": {
			old: reservedWorkload(withReclaim(rp("driver", 0), rp("workers", 3))), mut: withReclaim(rp("workers", 3)),
		},
		"lowered without a reservation": {old: workload(withReclaim(rp("workers", 3))), mut: withReclaim(rp("workers", 1))},
		"reset as the reservation is cleared": {
			old: reservedWorkload(withReclaim(rp("workers", 3))),
			mut: func(wl *kueue.Workload) {
				wl.Status.ReclaimablePods = nil
				wl.Status.Admission = nil
				setCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse)
			},
		},
		"elastic PodSet shrank": {
			old: reservedWorkload(withReclaim(rp("workers", 3)), func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{elasticJobAnnotation: "true"}
			}),
			mut: func(wl *kueue.Workload) {
				wl.Spec.PodSets[1].Count = 1
				wl.Status.ReclaimablePods = nil
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkloadUpdate(tc.old, changed(tc.old, tc.mut)), tc.want...)
		})
	}
}

func TestValidateCheckPodSetUpdates(t *testing.T) {
	upd := "status.admissionChecks[0].podSetUpdates"
	check := func(state kueue.CheckState, updates ...kueue.PodSetUpdate) func(*kueue.Workload) {
		return func(wl *kueue.Workload) {
			wl.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "prov", State: state, PodSetUpdates: updates}}
		}
	}
	good := kueue.PodSetUpdate{Name: "workers", Labels: map[string]string{"a": "b"},
		Annotations: map[string]string{"example.com/x": "anything goes here"}, NodeSelector: map[string]string{"pool": "x"},
		Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}
	cases := map[string]struct {
		old  *kueue.Workload
		mut  func(*kueue.Workload)
		want []string
	}{
		"set on the way to Ready": {old: reservedWorkload(check(kueue.CheckStatePending)), mut: check(kueue.CheckStateReady, good)},
		"unknown PodSet": {
			old: reservedWorkload(check(kueue.CheckStatePending)), mut: check(kueue.CheckStateReady, kueue.PodSetUpdate{Name: "main"}),
			want: []string{upd + "[0].name"},
		},
		"labels": {
			old:  reservedWorkload(check(kueue.CheckStatePending)),
			mut:  check(kueue.CheckStateReady, kueue.PodSetUpdate{Name: "workers", Labels: map[string]string{"bad key": "x"}}),
			want: []string{upd + "[0].labels[bad key]"},
		},
		"annotations": {
			old:  reservedWorkload(check(kueue.CheckStatePending)),
			mut:  check(kueue.CheckStateReady, kueue.PodSetUpdate{Name: "workers", Annotations: map[string]string{"a/b/c": ""}}),
			want: []string{upd + "[0].annotations"},
		},
		"node selector": {
			old:  reservedWorkload(check(kueue.CheckStatePending)),
			mut:  check(kueue.CheckStateReady, kueue.PodSetUpdate{Name: "workers", NodeSelector: map[string]string{"pool": "a b"}}),
			want: []string{upd + "[0].nodeSelector[pool]"},
		},
		"tolerations": {
			old: reservedWorkload(check(kueue.CheckStatePending)),
			mut: check(kueue.CheckStateReady, kueue.PodSetUpdate{Name: "workers",
				Tolerations: []corev1.Toleration{{Key: "bad key", Operator: corev1.TolerationOpExists}}}),
			want: []string{upd + "[0].tolerations[0].key"},
		},
		"changed while Ready": {
			old:  reservedWorkload(check(kueue.CheckStateReady, good)),
			mut:  check(kueue.CheckStateReady),
			want: []string{upd},
		},
		"dropped as the check is reset": {old: reservedWorkload(check(kueue.CheckStateReady, good)), mut: check(kueue.CheckStatePending)},
		"invalid stored entry carried over": {
			old: reservedWorkload(check(kueue.CheckStatePending, kueue.PodSetUpdate{Name: "main"})),
			mut: func(wl *kueue.Workload) { wl.Status.AdmissionChecks[0].Message = "still waiting" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkloadUpdate(tc.old, changed(tc.old, tc.mut)), tc.want...)
		})
	}
}

func TestValidateClusterName(t *testing.T) {
	nominated := func(wl *kueue.Workload) { wl.Status.NominatedClusterNames = []string{"worker-1", "worker-2"} }
	dispatch := func(name string) func(*kueue.Workload) {
		return func(wl *kueue.Workload) {
			wl.Status.NominatedClusterNames = nil
			wl.Status.ClusterName = ptr.To(name)
		}
	}
	cases := map[string]struct {
		old  *kueue.Workload
		mut  func(*kueue.Workload)
		want []string
	}{
		"nominated cluster": {old: workload(nominated), mut: dispatch("worker-2")},
		"other cluster":     {old: workload(nominated), mut: dispatch("worker-3"), want: []string{"status.clusterName"}},
		"none nominated":    {old: workload(), mut: dispatch("worker-1"), want: []string{"status.clusterName"}},
		"replacement slice": {
			old: workload(func(wl *kueue.Workload) {
				wl.Annotations = map[string]string{sliceReplacementAnnotation: "ns/old-slice"}
			}),
			mut: dispatch("worker-1"),
		},
		"kept": {
			old: workload(func(wl *kueue.Workload) { wl.Status.ClusterName = ptr.To("worker-9") }),
			mut: func(wl *kueue.Workload) { setCondition(wl, kueue.WorkloadFinished, metav1.ConditionTrue) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateWorkloadUpdate(tc.old, changed(tc.old, tc.mut)), tc.want...)
		})
	}
}
