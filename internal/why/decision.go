package why

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Resource is one resource the workload needs, in one flavor of its
// ClusterQueue: the amounts, and the workloads holding the most of it.
type Resource struct {
	Flavor   string `json:"flavor"`
	Resource string `json:"resource"`
	Need     string `json:"need"`
	Nominal  string `json:"nominal"`
	// Used is the ClusterQueue's use, borrowed amounts included.
	Used string `json:"used"`
	// Available is what the ClusterQueue can get now: the rest of its
	// nominal quota plus what its cohort can lend, within its borrowing
	// limit.
	Available string `json:"available"`
	// BorrowingLimit is "" when unlimited (or there is no cohort).
	BorrowingLimit string   `json:"borrowingLimit,omitempty"`
	Holders        []Holder `json:"holders,omitempty"`
}

// Holder is an admitted workload using a resource.
type Holder struct {
	Workload string `json:"workload"`
	Amount   string `json:"amount"`
	Priority int32  `json:"priority"`
}

// Preemption says whether evicting workloads would make room.
type Preemption struct {
	Possible bool     `json:"possible"`
	Victims  []string `json:"victims,omitempty"`
	Message  string   `json:"message"`
}

// maxHolders is how many holders a resource lists.
const maxHolders = 3

// explainDecision reads the scheduler's decision on the workload (or the
// StrictFIFO block it is in) into the explanation.
func explainDecision(ex *Explanation, res scheduling.Result, key types.NamespacedName, cq *state.ClusterQueue) {
	for _, b := range res.Blocked {
		if slices.ContainsFunc(b.Workloads, func(w *workload.Info) bool { return w.Key == key }) {
			ex.Blockers = append(ex.Blockers, Blocker{CauseBlockedByHead, b.Message()})
			return
		}
	}
	i := slices.IndexFunc(res.Decisions, func(d scheduling.Decision) bool { return d.Workload.Key == key })
	if i < 0 {
		return
	}
	d := &res.Decisions[i]
	if d.Assignment != nil {
		ex.Flavors = assignedFlavors(d.Assignment)
	}
	switch {
	case d.Admit:
		ex.FitsNow = true
	case len(d.Victims) > 0 || d.Reason == scheduling.WaitingForPreemptedWorkloads:
		victims := make([]string, 0, len(d.Victims))
		for _, v := range d.Victims {
			victims = append(victims, fmt.Sprintf("%s (%s)", v.Workload.Key, v.Reason))
		}
		ex.Preemption = &Preemption{Possible: true, Victims: victims, Message: d.Explain()}
		ex.Blockers = append(ex.Blockers, Blocker{CausePreempting, d.Explain()})
	default:
		ex.Blockers = append(ex.Blockers, Blocker{refusalCause(d), d.Explain()})
		ex.Preemption = &Preemption{Message: preemptionNote(d, cq)}
	}
}

// refusalCause names why the flavors did not fit: no flavor matches the
// pods, the request exceeds what the queue could ever get, the quota is
// in use, or the quota fits and the nodes of the topology do not.
func refusalCause(d *scheduling.Decision) string {
	if d.Reason == scheduling.TopologyPlacementFailed {
		return CauseTopology
	}
	if d.Assignment != nil {
		switch d.Assignment.Reason {
		case flavors.NoMatchingFlavor:
			return CauseNoMatchingFlavor
		case flavors.ExceedsMaxQuota:
			return CauseExceedsQuota
		}
	}
	return CauseQuota
}

// preemptionNote says why preemption does not help a refused workload.
func preemptionNote(d *scheduling.Decision, cq *state.ClusterQueue) string {
	switch {
	case d.Assignment != nil && d.Assignment.Mode == flavors.Preempt && len(d.Held) > 0:
		return "the workloads it could preempt are expected to end soon, so it waits for them instead of evicting them"
	case d.Assignment != nil && d.Assignment.Mode == flavors.Preempt:
		return "it could make room, but no set of workloads it may preempt frees enough"
	case cq != nil && cq.Preemption.WithinClusterQueue == kueue.PreemptionPolicyNever && cq.Preemption.ReclaimWithinCohort == kueue.PreemptionPolicyNever:
		return fmt.Sprintf("off: ClusterQueue %s preempts nothing (withinClusterQueue and reclaimWithinCohort are Never)", cq.Name)
	}
	return "it would not help: even with every workload it may preempt gone, it would not fit"
}

// assignedFlavors flattens an assignment to resource -> flavor.
func assignedFlavors(a *flavors.Assignment) map[string]string {
	out := map[string]string{}
	for _, ps := range a.PodSets {
		for r, f := range ps.Flavors {
			out[string(r)] = string(f)
		}
	}
	return out
}

// resourcesOf lists, per resource the workload requests, the flavor tried
// (or each flavor of the ClusterQueue covering it) with the amounts.
func resourcesOf(snap *state.Snapshot, cqName kueue.ClusterQueueReference, wl *kueue.Workload, tried map[string]string) []Resource {
	cq := snap.ClusterQueues[cqName]
	node := snap.Tree.ClusterQueue(cqName)
	if cq == nil || node == nil {
		return nil
	}
	need := resources.Requests{}
	for _, ps := range wl.Spec.PodSets {
		perPod, _ := resources.PodRequests(&ps.Template.Spec) // explained apart (CheckPodSets) when it fails
		for r, a := range perPod {
			need[r] = resources.Add(need[r], resources.Mul(a, int64(ps.Count)))
		}
	}
	names := make([]corev1.ResourceName, 0, len(need))
	for r := range need {
		names = append(names, r)
	}
	slices.Sort(names)
	admitted := snap.AdmittedIn(cqName)
	var out []Resource
	for _, r := range names {
		for _, fl := range flavorsFor(cq, r, tried) {
			fr := resources.FlavorResource{Flavor: fl, Resource: r}
			q, ok := node.Quota(fr)
			if !ok {
				continue
			}
			row := Resource{Flavor: string(fl), Resource: string(r), Need: amount(r, need[r]), Nominal: amount(r, q.Nominal),
				Used: amount(r, node.Usage(fr)), Available: amount(r, max(0, node.Available(fr))), Holders: holders(admitted, fr)}
			if q.BorrowingLimit != resources.Unlimited && cq.Cohort != "" {
				row.BorrowingLimit = amount(r, q.BorrowingLimit)
			}
			out = append(out, row)
		}
	}
	return out
}

// flavorsFor is the flavor the scheduler tried for r, or every flavor of
// the ClusterQueue covering r.
func flavorsFor(cq *state.ClusterQueue, r corev1.ResourceName, tried map[string]string) []kueue.ResourceFlavorReference {
	if f, ok := tried[string(r)]; ok {
		return []kueue.ResourceFlavorReference{kueue.ResourceFlavorReference(f)}
	}
	var out []kueue.ResourceFlavorReference
	for i := range cq.ResourceGroups {
		rg := &cq.ResourceGroups[i]
		if !rg.Covers(r) {
			continue
		}
		out = append(out, rg.Flavors...)
	}
	return out
}

// holders are the admitted workloads using the most of fr.
func holders(admitted []*state.Admitted, fr resources.FlavorResource) []Holder {
	type h struct {
		a   *state.Admitted
		amt resources.Amount
	}
	var hs []h
	for _, a := range admitted {
		if amt := a.Usage[fr]; amt > 0 {
			hs = append(hs, h{a, amt})
		}
	}
	slices.SortFunc(hs, func(x, y h) int {
		if c := cmp.Compare(y.amt, x.amt); c != 0 {
			return c
		}
		return cmp.Compare(x.a.Key.String(), y.a.Key.String())
	})
	out := make([]Holder, 0, min(len(hs), maxHolders))
	for _, x := range hs[:min(len(hs), maxHolders)] {
		out = append(out, Holder{Workload: x.a.Key.String(), Amount: amount(fr.Resource, x.amt), Priority: x.a.Priority})
	}
	return out
}

func amount(r corev1.ResourceName, a resources.Amount) string {
	q := resources.ToQuantity(r, a)
	return q.String()
}
