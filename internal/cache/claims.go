package cache

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// ResourceClaimTemplates (lifecycle.Claims): with deviceClassMappings
// configured, the devices a pending workload's pods claim through
// templates are charged to quota. The cache holds what quota reads of
// each template; a template created, changed or deleted places its
// namespace's pending workloads again, so a workload waiting for a
// missing template is queued once it exists.

// SetClaimTemplate records a ResourceClaimTemplate.
func (c *Cache) SetClaimTemplate(namespace, name string, t *lifecycle.ClaimTemplate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.claims[namespace] == nil {
		c.claims[namespace] = map[string]*lifecycle.ClaimTemplate{}
	}
	c.claims[namespace][name] = t
	c.placeNamespaceLocked(namespace)
}

// DeleteClaimTemplate forgets a ResourceClaimTemplate.
func (c *Cache) DeleteClaimTemplate(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.claims[namespace][name]; !ok {
		return
	}
	delete(c.claims[namespace], name)
	if len(c.claims[namespace]) == 0 {
		delete(c.claims, namespace)
	}
	c.placeNamespaceLocked(namespace)
}

// claimsLocked returns the claim resolver of a workload, nil when DRA
// claims are not charged or it claims nothing through templates.
func (c *Cache) claimsLocked(wl *kueue.Workload) *lifecycle.Claims {
	if len(c.opts.DeviceClasses) == 0 || !lifecycle.ClaimsThroughTemplates(wl) {
		return nil
	}
	templates := c.claims[wl.Namespace]
	return &lifecycle.Claims{Classes: c.opts.DeviceClasses, Template: func(name string) (*lifecycle.ClaimTemplate, bool) {
		t, ok := templates[name]
		return t, ok
	}}
}
