package audit

import (
	"fmt"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// queueTotals is what the workloads holding quota in one ClusterQueue add
// up to.
type queueTotals struct {
	reserved, admitted   resources.FlavorResourceQuantities
	reserving, admitting int32
}

// totalsByQueue sums, per ClusterQueue, the usage of the workloads holding
// quota there, and of those that are also admitted.
func totalsByQueue(wls []*workload) map[kueue.ClusterQueueReference]*queueTotals {
	out := map[kueue.ClusterQueueReference]*queueTotals{}
	for _, w := range wls {
		if !w.holding() {
			continue
		}
		t := out[w.clusterQueue()]
		if t == nil {
			t = &queueTotals{reserved: resources.FlavorResourceQuantities{}, admitted: resources.FlavorResourceQuantities{}}
			out[w.clusterQueue()] = t
		}
		t.reserved.Add(w.usage)
		t.reserving++
		if w.admitted {
			t.admitted.Add(w.usage)
			t.admitting++
		}
	}
	return out
}

// checkStatus compares each ClusterQueue's status with its workloads.
func checkStatus(wls []*workload, cqs []kueue.ClusterQueue) []Violation {
	totals := totalsByQueue(wls)
	var out []Violation
	for i := range cqs {
		cq := &cqs[i]
		t := totals[kueue.ClusterQueueReference(cq.Name)]
		if t == nil {
			t = &queueTotals{}
		}
		obj := "ClusterQueue " + cq.Name
		out = append(out, compareUsage(obj, "flavorsReservation", cq.Status.FlavorsReservation, t.reserved,
			"workloads holding a reservation")...)
		out = append(out, compareUsage(obj, "flavorsUsage", cq.Status.FlavorsUsage, t.admitted,
			"admitted workloads")...)
		if cq.Status.ReservingWorkloads != t.reserving {
			out = append(out, Violation{KindStatusMismatch, obj, fmt.Sprintf(
				"status.reservingWorkloads is %d, but %d workloads hold a reservation",
				cq.Status.ReservingWorkloads, t.reserving)})
		}
		if cq.Status.AdmittedWorkloads != t.admitting {
			out = append(out, Violation{KindStatusMismatch, obj, fmt.Sprintf(
				"status.admittedWorkloads is %d, but %d workloads are admitted",
				cq.Status.AdmittedWorkloads, t.admitting)})
		}
	}
	return out
}

// compareUsage reports every (flavor, resource) whose status total differs
// from what the workloads add up to; missing entries count as zero. A
// total that cannot be counted is reported and counts as resources.Max.
func compareUsage(obj, field string, status []kueue.FlavorUsage, want resources.FlavorResourceQuantities, who string) []Violation {
	got := resources.FlavorResourceQuantities{}
	var out []Violation
	for _, f := range status {
		for _, r := range f.Resources {
			fr := resources.FlavorResource{Flavor: f.Name, Resource: r.Name}
			total, err := resources.FromQuantity(r.Name, r.Total)
			if err != nil {
				out = append(out, Violation{KindInvalidObject, obj, fmt.Sprintf("status.%s %s total: %v", field, fr, err)})
				total = resources.Max
			}
			got[fr] = resources.Add(got[fr], total)
		}
	}
	for _, fr := range unionKeys(got, want) {
		if got[fr] == want[fr] {
			continue
		}
		out = append(out, Violation{KindStatusMismatch, obj, fmt.Sprintf(
			"status.%s %s total is %s, but %s use %s",
			field, fr, formatAmount(fr.Resource, got[fr]), who, formatAmount(fr.Resource, want[fr]))})
	}
	return out
}

// unionKeys returns the pairs present in a or b, sorted.
func unionKeys(a, b resources.FlavorResourceQuantities) []resources.FlavorResource {
	keys := make(resources.FlavorResourceQuantities, len(a)+len(b))
	for fr := range a {
		keys[fr] = 0
	}
	for fr := range b {
		keys[fr] = 0
	}
	return keys.Keys()
}
