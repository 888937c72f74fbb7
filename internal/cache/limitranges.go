package cache

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// limitRanges holds each namespace's LimitRange specs by name and their
// merged bounds.
type limitRanges struct {
	specs   map[string]map[string]corev1.LimitRangeSpec
	summary map[string]*lifecycle.LimitRanges
}

// SetLimitRange records a LimitRange; the namespace's pending workloads
// are placed again, since their pods may now be refused or allowed.
func (c *Cache) SetLimitRange(namespace, name string, spec corev1.LimitRangeSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limits.specs[namespace] == nil {
		c.limits.specs[namespace] = map[string]corev1.LimitRangeSpec{}
	}
	c.limits.specs[namespace][name] = spec
	c.limitsChangedLocked(namespace)
}

// DeleteLimitRange forgets a LimitRange.
func (c *Cache) DeleteLimitRange(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.limits.specs[namespace][name]; !ok {
		return
	}
	delete(c.limits.specs[namespace], name)
	if len(c.limits.specs[namespace]) == 0 {
		delete(c.limits.specs, namespace)
	}
	c.limitsChangedLocked(namespace)
}

// limitsChangedLocked merges a namespace's bounds again and, when they
// changed, places its pending workloads again and asks the controller to
// revisit those set aside or moved (to say why one is kept out).
func (c *Cache) limitsChangedLocked(namespace string) {
	specs := make([]corev1.LimitRangeSpec, 0, len(c.limits.specs[namespace]))
	for _, s := range c.limits.specs[namespace] {
		specs = append(specs, s)
	}
	summary := lifecycle.SummarizeLimitRanges(specs)
	old := c.limits.summary[namespace]
	if summary == nil {
		delete(c.limits.summary, namespace)
	} else {
		c.limits.summary[namespace] = summary
	}
	if old == nil && summary == nil {
		return
	}
	c.placeNamespaceLocked(namespace)
}

// placeNamespaceLocked places a namespace's pending workloads again, after
// something they are checked against changed (its LimitRanges, its
// ResourceClaimTemplates), and asks the controller to revisit those set
// aside or moved (to say why one is kept out).
func (c *Cache) placeNamespaceLocked(namespace string) {
	for lq, keys := range c.byLocal {
		if lq.Namespace != namespace {
			continue
		}
		for key := range keys {
			r := c.records[key]
			before := r.place
			if before != lifecycle.Queued && before != lifecycle.Aside {
				continue
			}
			c.placeLocked(r.obj)
			if after := c.records[key].place; after != before || after == lifecycle.Aside {
				c.revisits.add(key)
			}
		}
	}
	c.notify()
}
