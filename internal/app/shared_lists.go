package app

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Most Workloads of a cluster ask for one of a few resource shapes: a
// decoded ResourceList of one entry costs about 500 bytes (a map with its
// first group of slots), and a pod set as the cache trims it about 1.3 KB
// (a PodSet is 864 bytes and a Container 408 even when nearly empty). The
// cache's copies are never written to (readers get deep copies, handlers
// only read), so the Workloads that hold equal values share one: a
// sharedValues hands out the first value seen of each content.
type sharedValues[T any] struct {
	mu   sync.Mutex
	seen map[string]T
	max  int
	// key is the content of a value, false for one not worth sharing.
	key func(T) (string, bool)
}

// share returns a value equal to v: the one seen first with that content.
// Values are equal when reflect.DeepEqual says so, so quantities must be
// equal in form as well as in value, and a reader comparing them as they
// were decoded sees no change. Past max contents, values are kept as
// decoded.
func (s *sharedValues[T]) share(v T) T {
	key, ok := s.key(v)
	if !ok {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	got, found := s.seen[key]
	if found && reflect.DeepEqual(got, v) {
		return got
	}
	if !found && len(s.seen) < s.max {
		s.seen[key] = v
	}
	return v
}

// maxSharedLists bounds the table of resource lists; maxSharedEntries
// skips lists and label maps too long to be a common shape.
// maxSharedValues bounds the tables of pod sets, containers and labels.
const (
	maxSharedLists   = 4096
	maxSharedEntries = 8
	maxSharedValues  = 1024
)

func newSharedLists() *sharedValues[corev1.ResourceList] {
	return &sharedValues[corev1.ResourceList]{seen: map[string]corev1.ResourceList{}, max: maxSharedLists, key: listKey}
}

func listKey(rl corev1.ResourceList) (string, bool) {
	if len(rl) == 0 || len(rl) > maxSharedEntries {
		return "", false
	}
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
	return b.String(), true
}

// newSharedContainers shares a pod template's containers as the cache
// trims them (name, resources, restart policy): the jobs of one template
// hold equal ones even where their pod templates' labels differ.
func newSharedContainers() *sharedValues[[]corev1.Container] {
	return &sharedValues[[]corev1.Container]{seen: map[string][]corev1.Container{}, max: maxSharedValues, key: jsonKey[corev1.Container]}
}

// newSharedPodSets shares a pending Workload's pod sets as the cache
// trims them (trimPodSpec): Workloads made from one template hold equal
// ones.
func newSharedPodSets() *sharedValues[[]kueue.PodSet] {
	return &sharedValues[[]kueue.PodSet]{seen: map[string][]kueue.PodSet{}, max: maxSharedValues, key: jsonKey[kueue.PodSet]}
}

// newSharedLabels shares the label maps of pending Workloads: those its
// clients create directly (Kueue's scalability runner, for one) often
// carry the same few labels. A job's Workload carries its job's uid, so
// its labels are left as decoded.
func newSharedLabels() *sharedValues[map[string]string] {
	return &sharedValues[map[string]string]{seen: map[string]map[string]string{}, max: maxSharedValues, key: labelsKey}
}

func labelsKey(labels map[string]string) (string, bool) {
	if _, job := labels[jobframework.JobUIDLabel]; job || len(labels) == 0 || len(labels) > maxSharedEntries {
		return "", false
	}
	data, err := json.Marshal(labels) // keys in order
	if err != nil {
		return "", false
	}
	return string(data), true
}

// jsonKey is the content of a slice as JSON; empty and long ones are not
// shared.
func jsonKey[T any](s []T) (string, bool) {
	if len(s) == 0 {
		return "", false
	}
	data, err := json.Marshal(s)
	if err != nil || len(data) > 4096 {
		return "", false
	}
	return string(data), true
}
