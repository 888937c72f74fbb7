package app

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// Most Workloads of a cluster ask for one of a few resource shapes, and a
// decoded ResourceList of one entry costs about 500 bytes (a map with its
// first group of slots). The cache's copies are never written to (readers
// get deep copies, handlers only read), so the Workloads that hold equal
// lists share one: sharedLists hands out the first list seen of each
// content.
type sharedLists struct {
	mu   sync.Mutex
	seen map[string]corev1.ResourceList
}

// maxSharedLists bounds the table: lists beyond it are kept as decoded.
// maxSharedEntries skips lists too long to be a common shape.
const (
	maxSharedLists   = 4096
	maxSharedEntries = 8
)

func newSharedLists() *sharedLists {
	return &sharedLists{seen: map[string]corev1.ResourceList{}}
}

// share returns a list equal to rl: the one seen first with that content.
// Lists are equal when their quantities are, in value and in form, so a
// reader comparing them as they were decoded sees no change.
func (s *sharedLists) share(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 || len(rl) > maxSharedEntries {
		return rl
	}
	key := listKey(rl)
	s.mu.Lock()
	defer s.mu.Unlock()
	got, ok := s.seen[key]
	if ok && reflect.DeepEqual(got, rl) {
		return got
	}
	if !ok && len(s.seen) < maxSharedLists {
		s.seen[key] = rl
	}
	return rl
}

func listKey(rl corev1.ResourceList) string {
	names := make([]string, 0, len(rl))
	for n := range rl {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		q := rl[corev1.ResourceName(n)]
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte(';')
	}
	return b.String()
}
