package cache

import "slices"

// The scheduler's own pending-status writes (QuotaReserved=False with why
// a workload waits) move a workload to a new resourceVersion without
// changing anything an admission depends on. The cache remembers, per
// workload, the versions such writes went through, so that an admission
// decided on a version just before them is written against the latest of
// them instead of failing its precondition, and so that the informer's
// view of those versions does not undo the assumed admission.

// maxOwnChains bounds the memory of workloads deleted meanwhile; past it
// the record starts afresh (an admission may then fail once and retry).
const maxOwnChains = 100000

// maxChainLength bounds the versions kept per workload.
const maxChainLength = 8

// ownChain is a run of the scheduler's own writes: from is the version the
// first one was made on, to the versions they made, oldest first.
type ownChain struct {
	from string
	to   []string
}

func (c ownChain) covers(rv string) bool { return rv == c.from || slices.Contains(c.to, rv) }

func (c ownChain) latest() string { return c.to[len(c.to)-1] }

// NoteOwnWrite records that a pending-status write of the scheduler moved
// the workload from one resourceVersion to the next.
func (c *Cache) NoteOwnWrite(key Key, from, to string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.own[key]; ok && ch.covers(from) && len(ch.to) < maxChainLength {
		ch.to = append(ch.to, to)
		c.own[key] = ch
		return
	}
	if len(c.own) >= maxOwnChains {
		clear(c.own)
	}
	c.own[key] = ownChain{from: from, to: []string{to}}
}

// Rebase returns the resourceVersion an admission decided on rv is to be
// written against: the latest version the scheduler's own writes made
// from rv, or rv itself.
func (c *Cache) Rebase(key Key, rv string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.own[key]; ok && ch.covers(rv) {
		return ch.latest()
	}
	return rv
}

// AssumedOn reports whether an admission of the workload decided on rv is
// still assumed: not undone because the workload changed meanwhile.
func (c *Cache) AssumedOn(key Key, rv string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	got, ok := c.assumed[key]
	return ok && got == rv
}

// ownVersionLocked reports whether rv was made by the scheduler's own
// writes from the version an admission was decided on.
func (c *Cache) ownVersionLocked(key Key, decided, rv string) bool {
	ch, ok := c.own[key]
	return ok && ch.covers(decided) && slices.Contains(ch.to, rv)
}
