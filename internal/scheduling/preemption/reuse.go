package preemption

import "github.com/kuota-dev/kuota/internal/workload"

// kept returns the victims the preemptor chose in an earlier cycle
// (Preemptor.Earlier) when every one of them is still admitted in the
// preemptor's cohort tree and being evicted, none was taken by another
// preemptor this cycle, and the preemptor fits once they are gone. A new
// search would mostly find the same workloads (those being evicted come
// first in victim order) and could only add evictions; keeping them costs
// a lookup per victim instead of a search of the whole tree, which matters
// when many preemptors wait for slow evictions. The tree is left as it was.
func (f *Finder) kept(p *Preemptor) ([]Target, bool) {
	if len(p.Earlier) == 0 {
		return nil, false
	}
	root := p.Node.Root()
	removed := make([]candidate, 0, len(p.Earlier))
	defer func() { f.restore(removed) }()
	for _, v := range p.Earlier {
		c, ok := f.evicting(v)
		if !ok || f.taken[v.Key] || c.node.Root() != root {
			return nil, false
		}
		f.tree.RemoveUsage(c.node, c.a.Usage)
		removed = append(removed, c)
	}
	if !f.fits(p, true) {
		return nil, false
	}
	out := make([]Target, len(removed))
	for i, c := range removed {
		out[i] = Target{Workload: c.a, Reason: p.Earlier[i].Reason}
	}
	return out, true
}

// evicting finds a workload being evicted among its queue's admitted
// workloads, where those being evicted come first.
func (f *Finder) evicting(v workload.Victim) (candidate, bool) {
	for _, c := range f.queueCandidates(v.ClusterQueue) {
		if !c.a.Evicting {
			break
		}
		if c.a.Key == v.Key && c.a.UID == v.UID {
			return c, true
		}
	}
	return candidate{}, false
}
