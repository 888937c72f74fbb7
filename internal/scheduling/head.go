package scheduling

import (
	"fmt"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/workload"
)

// evaluateHead computes the head's assignment. When the head fits, or could
// fit by preempting, it returns true; otherwise it records the decision,
// moves past the head (for StrictFIFO, past the whole queue) and returns
// false.
func (c *cycle) evaluateHead(cur *cursor) bool {
	w := cur.items[cur.pos]
	if d, ok := c.precheck(cur, w); !ok {
		c.decide(d)
		cur.pos++
		return false
	}
	if prev := cur.failedBefore(w); prev != nil {
		c.decide(Decision{Workload: w, Reason: prev.Reason, Message: prev.Message, Assignment: prev.Assignment})
		cur.pos++
		return false
	}
	asg := c.assigner.Assign(cur.cq, cur.node, w.Shape, nil)
	if asg.Mode == flavors.NoFit && w.Shape.HasPartialAdmission() {
		if partial, ok := c.assigner.AssignPartial(cur.cq, cur.node, w.Shape); ok {
			asg = partial
		}
	}
	if asg.Mode != flavors.NoFit {
		cur.asg = asg
		cur.version = c.versions[cur.root]
		return true
	}
	c.refuse(cur, w, Decision{Workload: w, Reason: Reason(asg.Reason), Message: asg.Message, Assignment: &asg}, noPriority)
	return false
}

// refuse records a refusal of the head and moves on: past the whole queue
// for StrictFIFO, past the head for BestEffortFIFO, remembering the shape.
func (c *cycle) refuse(cur *cursor, w *workload.Info, d Decision, priority int32) {
	c.decide(d)
	cur.pos++
	if cur.cq.QueueingStrategy == kueue.StrictFIFO {
		c.blockRest(cur, w)
		return
	}
	cur.failed[failKey{shape: w.Shape, priority: priority}] = &d
}

// failedBefore returns the refusal of an earlier workload of the same shape
// that implies this one's.
func (cur *cursor) failedBefore(w *workload.Info) *Decision {
	if d, ok := cur.failed[failKey{shape: w.Shape, priority: noPriority}]; ok {
		return d
	}
	for key, d := range cur.failed {
		if key.shape == w.Shape && key.priority != noPriority && w.Priority <= key.priority {
			return d
		}
	}
	return nil
}

// preemptForHead finds victims for a head that needs preemption. With
// victims, the head waits for them and its quota is held for the rest of the
// cycle; without, partial admission is tried, then the head is refused.
func (c *cycle) preemptForHead(cur *cursor) {
	w := cur.items[cur.pos]
	asg := cur.asg
	targets := c.finder.Find(&preemption.Preemptor{Info: w, CQ: cur.cq, Node: cur.node, Usage: asg.Usage, Contested: asg.PreemptFor})
	if targets != nil {
		c.finder.Take(targets)
		c.tree.AddUsage(cur.node, asg.Usage)
		c.versions[cur.root]++
		c.decide(Decision{Workload: w, Assignment: &asg, Victims: targets, Reason: WaitingForPreemptedWorkloads,
			Message: fmt.Sprintf("waiting for %d preempted workload(s) to release quota", len(targets))})
		cur.pos++
		if cur.cq.QueueingStrategy == kueue.StrictFIFO {
			c.blockRest(cur, w)
		}
		return
	}
	if w.Shape.HasPartialAdmission() {
		if partial, ok := c.assigner.AssignPartial(cur.cq, cur.node, w.Shape); ok {
			cur.asg = partial
			c.admitHead(cur)
			return
		}
	}
	msg := asg.Message + "; no workloads can be preempted to make room"
	c.refuse(cur, w, Decision{Workload: w, Reason: WaitingForQuota, Message: msg, Assignment: &asg}, w.Priority)
}

func (c *cycle) admitHead(cur *cursor) {
	w := cur.items[cur.pos]
	asg := cur.asg
	c.tree.AddUsage(cur.node, asg.Usage)
	c.versions[cur.root]++
	c.decide(Decision{Workload: w, Admit: true, Assignment: &asg})
	c.result.Admitted++
	cur.pos++
}

func (c *cycle) decide(d Decision) { c.result.Decisions = append(c.result.Decisions, d) }

// precheck refuses workloads whose queue cannot admit them at all.
func (c *cycle) precheck(cur *cursor, w *workload.Info) (Decision, bool) {
	if cur.cq == nil || cur.node == nil {
		return Decision{Workload: w, Reason: ClusterQueueNotFound,
			Message: fmt.Sprintf("ClusterQueue %s doesn't exist", cur.name)}, false
	}
	if in, inactive := c.snap.ClusterQueueInactive(cur.name); inactive {
		return Decision{Workload: w, Reason: ClusterQueueInactive,
			Message: fmt.Sprintf("ClusterQueue %s is inactive: %s", cur.name, in.Message)}, false
	}
	if !c.snap.NamespaceAllowed(cur.cq, w.Key.Namespace) {
		return Decision{Workload: w, Reason: NamespaceMismatch,
			Message: fmt.Sprintf("the namespace %s doesn't match the namespaceSelector of ClusterQueue %s", w.Key.Namespace, cur.name)}, false
	}
	return Decision{}, true
}

// blockRest refuses everything behind a StrictFIFO head that was not
// admitted. Workloads whose namespace the queue does not admit are refused
// for that.
func (c *cycle) blockRest(cur *cursor, head *workload.Info) {
	msg := fmt.Sprintf("waiting behind %s, the head of StrictFIFO ClusterQueue %s, which isn't admitted yet", head.Key, cur.name)
	for ; cur.pos < len(cur.items); cur.pos++ {
		w := cur.items[cur.pos]
		if d, ok := c.precheck(cur, w); !ok {
			c.decide(d)
			continue
		}
		c.decide(Decision{Workload: w, Reason: BlockedByHead, Message: msg})
	}
}
