package manager

import (
	"fmt"
	"testing"
	"time"
)

// Objects applied together reach the manager in any order: a workload seen
// before its LocalQueue is first reported Misconfigured, then admitted as
// soon as the LocalQueue appears.
func TestWorkloadsCreatedJustBeforeTheirLocalQueue(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "100"))
	const n = 30
	var names []string
	for i := range n {
		name, lq := fmt.Sprintf("w%02d", i), fmt.Sprintf("lq%02d", i)
		names = append(names, name)
		create(t, newWorkload(ns, name, lq, 1, "1", 0))
		// Vary the gap so that some LocalQueues arrive while the
		// workload's Misconfigured status is being written.
		time.Sleep(time.Duration(i%10) * time.Millisecond)
		create(t, localQueue(ns, lq, cq))
	}
	eventually(t, 45*time.Second, "every workload admitted", func() error {
		if pending := pendingOf(t, ns, names...); len(pending) > 0 {
			return fmt.Errorf("not admitted: %v", pending)
		}
		return nil
	})
	waitUsage(t, cq, fl, n, fmt.Sprint(n), "0")
	checkAudit(t, ns)
}
