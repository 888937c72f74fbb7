package cache

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// PodState is what a node-failure check reads of a pod placed by
// topology: running (not ended and not being deleted), succeeded, or ended
// otherwise (failed, or being deleted).
type PodState uint8

const (
	PodRunning PodState = iota
	PodSucceeded
	PodEnded
)

// boundPod is one pod placed by topology and bound to a node.
type boundPod struct {
	workload Key
	node     string
	state    PodState
}

// boundPods counts, per workload and node, the pods placed by topology
// that are bound there, so that a node that is not ready fails for a
// workload once none of its pods runs there (lifecycle.NodeCheck.Pods).
type boundPods struct {
	pods   map[types.NamespacedName]boundPod
	counts map[Key]map[string]*lifecycle.NodePods
	synced bool
}

// SetBoundPod records a pod placed by topology: its workload, the node it
// is bound to ("" forgets it: not bound) and its state. A workload none
// of whose pods runs on a node any longer is looked at again.
func (c *Cache) SetBoundPod(key types.NamespacedName, workload Key, node string, st PodState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &c.bound
	old, had := b.pods[key]
	if had && old == (boundPod{workload: workload, node: node, state: st}) {
		return
	}
	if had {
		c.countBoundLocked(old, -1)
		delete(b.pods, key)
	}
	if node == "" {
		return
	}
	if b.pods == nil {
		b.pods, b.counts = map[types.NamespacedName]boundPod{}, map[Key]map[string]*lifecycle.NodePods{}
	}
	p := boundPod{workload: workload, node: node, state: st}
	b.pods[key] = p
	c.countBoundLocked(p, 1)
}

// DeleteBoundPod forgets a pod.
func (c *Cache) DeleteBoundPod(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.bound.pods[key]; ok {
		c.countBoundLocked(old, -1)
		delete(c.bound.pods, key)
	}
}

// MarkBoundPodsSynced records that the pods placed by topology were
// listed: until then no node fails for want of running pods. The
// workloads placed by topology are looked at again, for pods that ended
// on a not-ready node while no manager ran.
func (c *Cache) MarkBoundPodsSynced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bound.synced = true
	c.revisitTopologyHoldersLocked()
}

func (c *Cache) countBoundLocked(p boundPod, delta int) {
	b := &c.bound
	byNode := b.counts[p.workload]
	if byNode == nil {
		byNode = map[string]*lifecycle.NodePods{}
		b.counts[p.workload] = byNode
	}
	n := byNode[p.node]
	if n == nil {
		n = &lifecycle.NodePods{}
		byNode[p.node] = n
	}
	switch p.state {
	case PodRunning:
		n.Running += delta
		if n.Running == 0 {
			c.revisits.add(p.workload)
		}
	case PodSucceeded:
		n.Succeeded += delta
	default:
		n.Ended += delta
	}
	if *n == (lifecycle.NodePods{}) {
		delete(byNode, p.node)
		if len(byNode) == 0 {
			delete(b.counts, p.workload)
		}
	}
}

// boundPodsOnLocked returns what runs of a workload on a node; nil until
// the pods were listed.
func (c *Cache) boundPodsOnLocked(workload Key, node string) *lifecycle.NodePods {
	if !c.bound.synced {
		return nil
	}
	out := lifecycle.NodePods{}
	if n := c.bound.counts[workload][node]; n != nil {
		out = *n
	}
	return &out
}
