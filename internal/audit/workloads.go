package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// workload is what the checks need to know about one Workload.
type workload struct {
	obj  *kueue.Workload
	name string // "ns/name"
	// quotaReserved is QuotaReserved=True; hasAdmission is status.admission set.
	quotaReserved, hasAdmission bool
	admitted, finished          bool
	// usage is the quota held, reclaimable pods deducted; nil unless holding.
	usage resources.FlavorResourceQuantities
	// uncountable says which recorded usage Kuota cannot count ("" when
	// all can); such usage counts as resources.Max, as in the manager.
	uncountable string
}

// holding reports whether the workload holds quota: a reservation with an
// admission, not finished.
func (w *workload) holding() bool {
	return w.quotaReserved && w.hasAdmission && !w.finished
}

// clusterQueue is where the workload holds quota ("" without admission).
func (w *workload) clusterQueue() kueue.ClusterQueueReference {
	if !w.hasAdmission {
		return ""
	}
	return w.obj.Status.Admission.ClusterQueue
}

func (w *workload) object() string { return "Workload " + w.name }

// classify reads the workloads, sorted by namespace and name.
func classify(items []kueue.Workload) []*workload {
	out := make([]*workload, 0, len(items))
	for i := range items {
		wl := &items[i]
		conds := wl.Status.Conditions
		w := &workload{
			obj:           wl,
			name:          wl.Namespace + "/" + wl.Name,
			quotaReserved: apimeta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved),
			hasAdmission:  wl.Status.Admission != nil,
			admitted:      apimeta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted),
			finished:      apimeta.IsStatusConditionTrue(conds, kueue.WorkloadFinished),
		}
		if w.holding() {
			w.usage, w.uncountable = usageOf(wl)
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *workload) int { return strings.Compare(a.name, b.name) })
	return out
}

// usageOf sums the resourceUsage of the podSetAssignments per assigned
// flavor, minus (resourceUsage/count) x reclaimable pods for each PodSet.
// Resources without an assigned flavor are not counted against quota. It
// also says which quantity, if any, cannot be counted.
func usageOf(wl *kueue.Workload) (resources.FlavorResourceQuantities, string) {
	uncountable := ""
	reclaimable := map[kueue.PodSetReference]int32{}
	for _, rp := range wl.Status.ReclaimablePods {
		reclaimable[rp.Name] = rp.Count
	}
	out := resources.FlavorResourceQuantities{}
	for i := range wl.Status.Admission.PodSetAssignments {
		psa := &wl.Status.Admission.PodSetAssignments[i]
		count := assignedCount(wl, psa)
		reclaim := min(max(reclaimable[podSetName(psa.Name)], 0), count)
		for res, q := range psa.ResourceUsage {
			flavor, ok := psa.Flavors[res]
			if !ok {
				continue
			}
			total, err := resources.FromQuantity(res, q)
			if err != nil {
				total = resources.Max
				if uncountable == "" {
					uncountable = fmt.Sprintf("status.admission.podSetAssignments[%d].resourceUsage: %v", i, err)
				}
			}
			if reclaim > 0 && count > 0 {
				total = resources.Sub(total, resources.Mul(total/int64(count), int64(reclaim)))
			}
			if total != 0 {
				fr := resources.FlavorResource{Flavor: flavor, Resource: res}
				out[fr] = resources.Add(out[fr], total)
			}
		}
	}
	return out, uncountable
}

func podSetName(n kueue.PodSetReference) kueue.PodSetReference {
	if n == "" {
		return kueue.DefaultPodSetName
	}
	return n
}

// assignedCount is the number of pods an assignment is for: its count, or
// the PodSet's count when unset.
func assignedCount(wl *kueue.Workload, psa *kueue.PodSetAssignment) int32 {
	if psa.Count != nil {
		return *psa.Count
	}
	for _, ps := range wl.Spec.PodSets {
		if podSetName(ps.Name) == podSetName(psa.Name) {
			return ps.Count
		}
	}
	return 0
}

// checkConsistency reports status.admission without QuotaReserved=True and
// the reverse, and Admitted=True without QuotaReserved=True.
func checkConsistency(wls []*workload) []Violation {
	var out []Violation
	for _, w := range wls {
		switch {
		case w.hasAdmission && !w.quotaReserved:
			out = append(out, Violation{KindInconsistentReservation, w.object(), fmt.Sprintf(
				"status.admission is set (ClusterQueue %q) but QuotaReserved is %s",
				w.obj.Status.Admission.ClusterQueue, conditionStatus(w.obj, kueue.WorkloadQuotaReserved))})
		case w.quotaReserved && !w.hasAdmission:
			out = append(out, Violation{KindInconsistentReservation, w.object(),
				"QuotaReserved is True but status.admission is not set"})
		}
		if w.uncountable != "" {
			out = append(out, Violation{KindInvalidObject, w.object(), w.uncountable})
		}
		if w.admitted && !w.quotaReserved {
			out = append(out, Violation{KindAdmittedWithoutReservation, w.object(), fmt.Sprintf(
				"Admitted is True but QuotaReserved is %s", conditionStatus(w.obj, kueue.WorkloadQuotaReserved))})
		}
	}
	return out
}

func conditionStatus(wl *kueue.Workload, condType string) string {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, condType)
	if c == nil {
		return "not set"
	}
	return string(c.Status)
}

// ownerKeys names the jobs a workload belongs to: its controller's UID and
// its job-uid label.
func ownerKeys(wl *kueue.Workload) []string {
	var keys []string
	if ref := metav1.GetControllerOfNoCopy(wl); ref != nil && ref.UID != "" {
		keys = append(keys, fmt.Sprintf("owner %s %s (uid %s)", ref.Kind, ref.Name, ref.UID))
	}
	if uid := wl.Labels[JobUIDLabel]; uid != "" {
		keys = append(keys, fmt.Sprintf("label %s=%s", JobUIDLabel, uid))
	}
	return keys
}

// checkDoubleAdmission reports owners with more than one unfinished
// workload holding quota. A group found both by owner UID and by label is
// reported once.
func checkDoubleAdmission(wls []*workload) []Violation {
	groups := map[string][]*workload{}
	var keys []string
	for _, w := range wls {
		if !w.holding() {
			continue
		}
		for _, k := range ownerKeys(w.obj) {
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], w)
		}
	}
	slices.Sort(keys)
	seen := map[string]bool{}
	var out []Violation
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		names := make([]string, len(g))
		for i, w := range g {
			names[i] = fmt.Sprintf("%s (ClusterQueue %s)", w.name, w.clusterQueue())
		}
		list := strings.Join(names, ", ")
		if seen[list] {
			continue
		}
		seen[list] = true
		out = append(out, Violation{KindDoubleAdmission, g[0].object(), fmt.Sprintf(
			"%d workloads of %s hold quota at once: %s", len(g), k, list)})
	}
	return out
}

// checkReferences reports workloads holding quota in a ClusterQueue or a
// flavor that does not exist.
func checkReferences(wls []*workload, cqs []kueue.ClusterQueue, rfs []kueue.ResourceFlavor) []Violation {
	queues := map[kueue.ClusterQueueReference]bool{}
	for i := range cqs {
		queues[kueue.ClusterQueueReference(cqs[i].Name)] = true
	}
	flavors := map[kueue.ResourceFlavorReference]bool{}
	for i := range rfs {
		flavors[kueue.ResourceFlavorReference(rfs[i].Name)] = true
	}
	var out []Violation
	for _, w := range wls {
		if !w.holding() {
			continue
		}
		if cq := w.clusterQueue(); !queues[cq] {
			out = append(out, Violation{KindUnknownReference, w.object(),
				fmt.Sprintf("holds quota in ClusterQueue %q, which does not exist", cq)})
		}
		var missing []string
		for _, fr := range w.usage.Keys() {
			if !flavors[fr.Flavor] && !slices.Contains(missing, string(fr.Flavor)) {
				missing = append(missing, string(fr.Flavor))
			}
		}
		if len(missing) > 0 {
			out = append(out, Violation{KindUnknownReference, w.object(),
				fmt.Sprintf("holds quota of ResourceFlavor %s, which does not exist", strings.Join(missing, ", "))})
		}
	}
	return out
}

// checkFinalizers reports workloads that keep the resource-in-use finalizer
// more than grace after nothing needs it any more: after they finished
// (deleted or not; the quota is released then), or after they were deleted
// with no owner left (no job whose pods could still run).
func checkFinalizers(wls []*workload, grace time.Duration, now time.Time) []Violation {
	var out []Violation
	for _, w := range wls {
		if !slices.Contains(w.obj.Finalizers, kueue.ResourceInUseFinalizerName) {
			continue
		}
		del := w.obj.DeletionTimestamp
		var since time.Time
		var what string
		switch {
		case w.finished:
			what = "finished"
			if c := apimeta.FindStatusCondition(w.obj.Status.Conditions, kueue.WorkloadFinished); c != nil {
				since = c.LastTransitionTime.Time
			}
			if del != nil {
				what = "finished and deleted"
				if del.After(since) {
					since = del.Time
				}
			}
		case del != nil && len(w.obj.OwnerReferences) == 0:
			what, since = "deleted with no owner", del.Time
		default:
			continue
		}
		if age := now.Sub(since); age > grace {
			out = append(out, Violation{KindLeftoverFinalizer, w.object(), fmt.Sprintf(
				"%s %s ago, still has finalizer %s (grace %s)",
				what, age.Round(time.Second), kueue.ResourceInUseFinalizerName, grace)})
		}
	}
	return out
}

// formatAmount renders an amount of a resource as a quantity
// (resources.Format).
func formatAmount(res corev1.ResourceName, a resources.Amount) string {
	return resources.Format(res, a)
}
