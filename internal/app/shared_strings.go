package app

import "sync"

// The JSON decoder allocates every string of every object anew, and most
// of a cached Workload's strings repeat across Workloads: its namespace,
// queue, ClusterQueue and flavor names, pod set and container names, and
// its conditions' types, reasons and messages. Strings are immutable, so
// Workloads may share one copy of each: sharedStrings hands out the first
// copy seen. Only fields of few distinct values go through it (never
// names or UIDs), and the table is bounded.
type sharedStrings struct {
	mu   sync.Mutex
	seen map[string]string
}

// maxSharedStrings bounds the table; maxSharedStringLen skips strings too
// long to be worth a slot (a message naming many resources).
const (
	maxSharedStrings   = 16384
	maxSharedStringLen = 256
)

func newSharedStrings() *sharedStrings {
	return &sharedStrings{seen: map[string]string{}}
}

// share returns a string equal to v, the first seen of its content.
func (s *sharedStrings) share(v string) string {
	if v == "" || len(v) > maxSharedStringLen {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.seen[v]; ok {
		return got
	}
	if len(s.seen) < maxSharedStrings {
		s.seen[v] = v
	}
	return v
}
