// Package intern shares one copy of strings that repeat across objects the
// manager keeps in memory (a Workload's namespace, queue and condition
// texts; the messages of pending notes). The JSON decoder and fmt allocate
// every string anew; strings are immutable, so equal ones may be one.
package intern

import "sync"

// Table hands out the first copy seen of each string. It is bounded: past
// MaxStrings strings, or for strings longer than MaxLen, it hands back
// what it is given. Only fields of few distinct values should go through
// it (never names or UIDs), or the table fills with strings no one shares.
// Safe for concurrent use.
type Table struct {
	mu   sync.Mutex
	seen map[string]string
}

// Bounds of a Table.
const (
	MaxStrings = 16384
	MaxLen     = 256
)

// New returns an empty table.
func New() *Table {
	return &Table{seen: map[string]string{}}
}

// Share returns a string equal to v: the first seen of its content.
func (t *Table) Share(v string) string {
	if v == "" || len(v) > MaxLen {
		return v
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if got, ok := t.seen[v]; ok {
		return got
	}
	if len(t.seen) < MaxStrings {
		t.seen[v] = v
	}
	return v
}
