package scheduler

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// keyLocks serializes the status writes of one workload: a pending-status
// write and an admission of the same workload never run at once, so an
// admission sees the version a pending write made (Cache.NoteOwnWrite) and
// a pending write sees that the workload is being admitted.
type keyLocks struct {
	mu   sync.Mutex
	held map[types.NamespacedName]*keyLock
}

type keyLock struct {
	mu    sync.Mutex
	users int
}

// lock locks key and returns the unlock function.
func (l *keyLocks) lock(key types.NamespacedName) func() {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[types.NamespacedName]*keyLock{}
	}
	k := l.held[key]
	if k == nil {
		k = &keyLock{}
		l.held[key] = k
	}
	k.users++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		k.users--
		if k.users == 0 {
			delete(l.held, key)
		}
		l.mu.Unlock()
	}
}
