package manager

import (
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A head that does not fit blocks a StrictFIFO queue: a smaller workload
// behind it waits (WaitingForQuota) although it would fit. Once quota frees,
// both are admitted in order.
func TestStrictFIFOHeadBlocksQueue(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4", strict), localQueue(ns, "lq", cq))
	create(t, newWorkload(ns, "running", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "running", cq)
	// The head (higher priority, so it is ahead whatever the creation
	// times) needs 3 cpu, only 2 are free; the small one needs 1.
	create(t, newWorkload(ns, "head", "lq", 3, "1", 10), newWorkload(ns, "small", "lq", 1, "1", 0))
	waitPending(t, ns, "head", kueue.WorkloadReasonWaitingForQuota)
	waitPending(t, ns, "small", kueue.WorkloadReasonWaitingForQuota)
	stayPending(t, ns, "head", "small")
	waitUsage(t, cq, fl, 1, "2", "0")

	finish(t, ns, "running")
	waitAdmitted(t, ns, "head", cq)
	waitAdmitted(t, ns, "small", cq)
	waitUsage(t, cq, fl, 2, "4", "0")
}

// BestEffortFIFO skips a head that does not fit: the smaller workload
// behind it is admitted; the head waits for quota.
func TestBestEffortFIFOSkipsHead(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4", func(c *kueue.ClusterQueue) {
		c.Spec.QueueingStrategy = kueue.BestEffortFIFO
	}), localQueue(ns, "lq", cq))
	create(t, newWorkload(ns, "running", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "running", cq)
	create(t, newWorkload(ns, "head", "lq", 3, "1", 10), newWorkload(ns, "small", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "small", cq)
	waitPending(t, ns, "head", kueue.WorkloadReasonWaitingForQuota)
	waitUsage(t, cq, fl, 2, "3", "0")

	// Freeing quota lets the head in (it was set aside, not forgotten).
	finish(t, ns, "running")
	waitAdmitted(t, ns, "head", cq)
	waitUsage(t, cq, fl, 2, "4", "0")
}
