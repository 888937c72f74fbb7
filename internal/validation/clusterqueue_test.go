package validation

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// manyFlavors returns n flavors with one quota for each resource.
func manyFlavors(prefix string, n int, resources []corev1.ResourceName) []kueue.FlavorQuotas {
	out := make([]kueue.FlavorQuotas, n)
	for i := range out {
		out[i].Name = kueue.ResourceFlavorReference(fmt.Sprintf("%s-%d", prefix, i))
		for _, r := range resources {
			out[i].Resources = append(out[i].Resources, quota(r, "1"))
		}
	}
	return out
}

func manyResources(prefix string, n int) []corev1.ResourceName {
	out := make([]corev1.ResourceName, n)
	for i := range out {
		out[i] = corev1.ResourceName(fmt.Sprintf("example.com/%s-%d", prefix, i))
	}
	return out
}

func checkStrategy(onFlavors ...kueue.ResourceFlavorReference) *kueue.AdmissionChecksStrategy {
	return &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{
		{Name: "everywhere"},
		{Name: "prov", OnFlavors: onFlavors},
	}}
}

func concurrentPolicy(mode kueue.ConcurrentAdmissionMigrationMode, last *kueue.ResourceFlavorReference) *kueue.ConcurrentAdmissionPolicy {
	p := &kueue.ConcurrentAdmissionPolicy{Migration: kueue.ConcurrentAdmissionMigration{Mode: mode}}
	if last != nil {
		p.Migration.Constraints = &kueue.ConcurrentAdmissionMigrationConstraints{LastAcceptableFlavorName: last}
	}
	return p
}

func TestValidateClusterQueue(t *testing.T) {
	rg := "spec.resourceGroups"
	cases := map[string]struct {
		mut  func(*kueue.ClusterQueue)
		want []string
	}{
		"valid": {mut: func(*kueue.ClusterQueue) {}},
		"limits with a cohort, lendingLimit equal to nominal": {mut: func(cq *kueue.ClusterQueue) {
			cq.Spec.CohortName = "co"
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "10", "4", "10")
		}},
		"quotas out of the order of coveredResources": {
			mut: func(cq *kueue.ClusterQueue) {
				f := &cq.Spec.ResourceGroups[0].Flavors[1]
				f.Resources[0], f.Resources[1] = f.Resources[1], f.Resources[0]
			},
			want: []string{rg + "[0].flavors[1].resources[0].name", rg + "[0].flavors[1].resources[1].name"},
		},
		"flavor in two groups": {
			mut:  func(cq *kueue.ClusterQueue) { cq.Spec.ResourceGroups[1].Flavors[0].Name = "a" },
			want: []string{rg + "[1].flavors[0].name"},
		},
		"resource in two groups": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[1] = group([]corev1.ResourceName{"cpu"}, flavor("g", quota("cpu", "1")))
			},
			want: []string{rg + "[1].coveredResources[0]"},
		},
		"resource twice in a group": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[1] = group([]corev1.ResourceName{"x", "x"}, flavor("g", quota("x", "1"), quota("x", "1")))
			},
			want: []string{rg + "[1].coveredResources[1]"},
		},
		"invalid resource name": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[1] = group([]corev1.ResourceName{"bad name"}, flavor("g", quota("bad name", "1")))
			},
			want: []string{rg + "[1].coveredResources[0]"},
		},
		"pods may be covered": {mut: func(cq *kueue.ClusterQueue) {
			cq.Spec.ResourceGroups[1] = group([]corev1.ResourceName{"pods"}, flavor("g", quota("pods", "10")))
		}},
		"borrowingLimit without cohort": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[1] = quota("memory", "1Gi", "1Gi")
			},
			want: []string{rg + "[0].flavors[0].resources[1].borrowingLimit"},
		},
		"lendingLimit without cohort": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[1] = quota("memory", "1Gi", "", "1Gi")
			},
			want: []string{rg + "[0].flavors[0].resources[1].lendingLimit"},
		},
		"lendingLimit above nominalQuota": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.CohortName = "co"
				cq.Spec.ResourceGroups[0].Flavors[1].Resources[0] = quota("cpu", "5", "", "5001m")
			},
			want: []string{rg + "[0].flavors[1].resources[0].lendingLimit"},
		},
		"too many flavors": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups = nil
				for i := range 5 {
					r := corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))
					cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups,
						kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{r}, Flavors: manyFlavors(string(r[12:]), 52, []corev1.ResourceName{r})})
				}
			},
			want: []string{rg},
		},
		"too many covered resources": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups = nil
				for i := range 5 {
					res := manyResources(fmt.Sprint(i), 52)
					cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups,
						kueue.ResourceGroup{CoveredResources: res, Flavors: manyFlavors(fmt.Sprint("f", i), 1, res)})
				}
			},
			want: []string{rg},
		},
		"too many flavor and resource pairs in a group": {
			mut: func(cq *kueue.ClusterQueue) {
				res := manyResources("r", 9)
				cq.Spec.ResourceGroups = []kueue.ResourceGroup{{CoveredResources: res, Flavors: manyFlavors("f", 57, res)}}
			},
			want: []string{rg + "[0]"},
		},
		"namespaceSelector": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "team", Operator: "Near", Values: []string{"a"}},
				}}
			},
			want: []string{"spec.namespaceSelector.matchExpressions[0].operator"},
		},
		"negative fair-sharing weight": {
			mut:  func(cq *kueue.ClusterQueue) { cq.Spec.FairSharing = &kueue.FairSharing{Weight: qp("-1")} },
			want: []string{"spec.fairSharing.weight"},
		},
		"fair-sharing weight below 1n": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.FairSharing = &kueue.FairSharing{Weight: resource.NewScaledQuantity(1, -10)}
			},
			want: []string{"spec.fairSharing.weight"},
		},
		"fair-sharing weights 0 and 1n": {mut: func(cq *kueue.ClusterQueue) {
			cq.Spec.FairSharing = &kueue.FairSharing{Weight: qp("0")}
			if errs := validateFairSharing(&kueue.FairSharing{Weight: qp("1n")}, nil); len(errs) > 0 {
				t.Errorf("1n rejected: %v", errs)
			}
		}},
		"onFlavors naming flavors of the queue": {
			mut: func(cq *kueue.ClusterQueue) { cq.Spec.AdmissionChecksStrategy = checkStrategy("a", "g") },
		},
		"onFlavors in a queue without quota yet": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups = nil
				cq.Spec.AdmissionChecksStrategy = checkStrategy("later")
			},
		},
		"onFlavors naming another flavor": {
			mut:  func(cq *kueue.ClusterQueue) { cq.Spec.AdmissionChecksStrategy = checkStrategy("a", "z") },
			want: []string{"spec.admissionChecksStrategy.admissionChecks[1].onFlavors[1]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateClusterQueue(clusterQueue(tc.mut)), tc.want...)
		})
	}
}

func TestValidateClusterQueueConcurrentAdmission(t *testing.T) {
	single := func(cq *kueue.ClusterQueue) { cq.Spec.ResourceGroups = cq.Spec.ResourceGroups[:1] }
	cases := map[string]struct {
		mut  func(*kueue.ClusterQueue)
		want []string
	}{
		"valid": {mut: func(cq *kueue.ClusterQueue) {
			single(cq)
			cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.TryPreferredFlavors, ptr.To[kueue.ResourceFlavorReference]("b"))
		}},
		"two resource groups": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.TryPreferredFlavors, nil)
			},
			want: []string{"spec.resourceGroups"},
		},
		"too many flavors": {
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups = []kueue.ResourceGroup{{CoveredResources: cpuMem, Flavors: manyFlavors("f", 17, cpuMem)}}
				cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.RetainFirstAdmission, nil)
			},
			want: []string{"spec.resourceGroups[0].flavors"},
		},
		"StrictFIFO": {
			mut: func(cq *kueue.ClusterQueue) {
				single(cq)
				cq.Spec.QueueingStrategy = kueue.StrictFIFO
				cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.TryPreferredFlavors, nil)
			},
			want: []string{"spec.queueingStrategy"},
		},
		"constraints with RetainFirstAdmission": {
			mut: func(cq *kueue.ClusterQueue) {
				single(cq)
				cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.RetainFirstAdmission, ptr.To[kueue.ResourceFlavorReference]("a"))
			},
			want: []string{"spec.concurrentAdmissionPolicy.migration.constraints"},
		},
		"lastAcceptableFlavorName not a flavor of the queue": {
			mut: func(cq *kueue.ClusterQueue) {
				single(cq)
				cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.TryPreferredFlavors, ptr.To[kueue.ResourceFlavorReference]("g"))
			},
			want: []string{"spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateClusterQueue(clusterQueue(tc.mut)), tc.want...)
		})
	}
}

func TestValidateClusterQueueUpdate(t *testing.T) {
	withStale := clusterQueue(func(cq *kueue.ClusterQueue) {
		cq.Spec.CohortName = "co"
		cq.Spec.AdmissionChecksStrategy = checkStrategy("a", "gone")
		cq.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "10", "", "20") // stored before the webhook
	})
	withPolicy := clusterQueue(func(cq *kueue.ClusterQueue) {
		cq.Spec.ResourceGroups = cq.Spec.ResourceGroups[:1]
		cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.TryPreferredFlavors, nil)
	})
	cases := map[string]struct {
		old  *kueue.ClusterQueue
		mut  func(*kueue.ClusterQueue)
		want []string
	}{
		"metadata-only update of an invalid stored queue": {
			old: withStale,
			mut: func(cq *kueue.ClusterQueue) { cq.Finalizers = nil },
		},
		"onFlavors entry kept from before": {
			old: withStale,
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "10")
				cq.Spec.StopPolicy = ptr.To(kueue.Hold)
			},
		},
		"onFlavors entry added": {
			old: withStale,
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "10")
				cq.Spec.AdmissionChecksStrategy.AdmissionChecks[1].OnFlavors = append(cq.Spec.AdmissionChecksStrategy.AdmissionChecks[1].OnFlavors, "new")
			},
			want: []string{"spec.admissionChecksStrategy.admissionChecks[1].onFlavors[2]"},
		},
		"changed spec is validated": {
			old:  withStale,
			mut:  func(cq *kueue.ClusterQueue) { cq.Spec.StopPolicy = ptr.To(kueue.Hold) },
			want: []string{"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit"},
		},
		"concurrentAdmissionPolicy kept": {
			old: withPolicy,
			mut: func(cq *kueue.ClusterQueue) { cq.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "20") },
		},
		"concurrentAdmissionPolicy changed": {
			old: withPolicy,
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ConcurrentAdmissionPolicy.Migration.Mode = kueue.RetainFirstAdmission
			},
			want: []string{"spec.concurrentAdmissionPolicy"},
		},
		"concurrentAdmissionPolicy removed": {
			old:  withPolicy,
			mut:  func(cq *kueue.ClusterQueue) { cq.Spec.ConcurrentAdmissionPolicy = nil },
			want: []string{"spec.concurrentAdmissionPolicy"},
		},
		"concurrentAdmissionPolicy added": {
			old: clusterQueue(func(cq *kueue.ClusterQueue) { cq.Spec.ResourceGroups = cq.Spec.ResourceGroups[:1] }),
			mut: func(cq *kueue.ClusterQueue) {
				cq.Spec.ConcurrentAdmissionPolicy = concurrentPolicy(kueue.TryPreferredFlavors, nil)
			},
			want: []string{"spec.concurrentAdmissionPolicy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			updated := tc.old.DeepCopy()
			tc.mut(updated)
			expectPaths(t, ValidateClusterQueueUpdate(tc.old, updated), tc.want...)
		})
	}
}
