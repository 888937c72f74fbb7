package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Dynamic resource allocation (DRA): a pod that claims devices through a
// ResourceClaimTemplate is charged, per device request of the template,
// its count of the logical resource its DeviceClass maps to
// (resources.deviceClassMappings in the Configuration). Only exact
// requests in ExactCount mode can be counted; a workload whose claims
// cannot be (a template that does not exist, a DeviceClass no mapping
// names, the All mode, a firstAvailable request) is kept out of its queue
// with a message, since admitting it would let it take devices that no
// quota counts. Claims named directly (resourceClaimName) belong to
// someone else's quota and are not charged.

// Claims resolves what a workload's pods claim.
type Claims struct {
	// Classes maps DeviceClass names to the logical resource charged;
	// a class mapped to "" is known but not counted.
	Classes map[string]corev1.ResourceName
	// Template returns a ResourceClaimTemplate of the workload's
	// namespace by name.
	Template func(name string) (*ClaimTemplate, bool)
}

// ClaimTemplate is what quota reads of a ResourceClaimTemplate.
type ClaimTemplate struct {
	Requests []DeviceRequest
}

// DeviceRequest is one device request of a template.
type DeviceRequest struct {
	Name string
	// Class is the DeviceClass of an exact request; "" for a
	// firstAvailable request.
	Class string
	// Count is how many devices it asks for (ExactCount mode).
	Count int64
	// All is set for the All allocation mode.
	All bool
}

// NewClaimTemplate reads a ResourceClaimTemplate's device requests.
func NewClaimTemplate(spec *resourcev1.ResourceClaimTemplateSpec) *ClaimTemplate {
	t := &ClaimTemplate{}
	for _, r := range spec.Spec.Devices.Requests {
		d := DeviceRequest{Name: r.Name}
		if e := r.Exactly; e != nil {
			d.Class = e.DeviceClassName
			d.All = e.AllocationMode == resourcev1.DeviceAllocationModeAll
			d.Count = 1
			if e.AllocationMode != resourcev1.DeviceAllocationModeAll && e.Count > 0 {
				d.Count = e.Count
			}
		}
		t.Requests = append(t.Requests, d)
	}
	return t
}

// PodClaims returns the devices one pod of spec claims through templates,
// per logical resource, or why they cannot be counted. A nil c counts
// nothing.
func (c *Claims) PodClaims(spec *corev1.PodSpec) (resources.Requests, string) {
	if c == nil {
		return nil, ""
	}
	var out resources.Requests
	for _, pc := range spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil {
			continue
		}
		name := *pc.ResourceClaimTemplateName
		t, ok := c.Template(name)
		if !ok {
			return nil, fmt.Sprintf("ResourceClaimTemplate %s of claim %s does not exist", name, pc.Name)
		}
		for _, d := range t.Requests {
			switch {
			case d.Class == "":
				return nil, fmt.Sprintf("request %s of ResourceClaimTemplate %s: only exact device requests (exactly) can be charged to quota", d.Name, name)
			case d.All:
				return nil, fmt.Sprintf("request %s of ResourceClaimTemplate %s: allocation mode All cannot be charged to quota", d.Name, name)
			}
			r, mapped := c.Classes[d.Class]
			if !mapped {
				return nil, fmt.Sprintf("DeviceClass %s (request %s of ResourceClaimTemplate %s) is not in resources.deviceClassMappings", d.Class, d.Name, name)
			}
			if r == "" {
				continue // mapped by counters or capacity: not counted yet
			}
			if out == nil {
				out = resources.Requests{}
			}
			out[r] = resources.Add(out[r], resources.Mul(resources.Unit(r), d.Count))
		}
	}
	return out, ""
}

// CheckClaims reports why the device claims of a pending workload cannot
// be charged to quota, "" when they can (or there are none).
func CheckClaims(wl *kueue.Workload, c *Claims) string {
	if c == nil {
		return ""
	}
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		if _, msg := c.PodClaims(&ps.Template.Spec); msg != "" {
			return fmt.Sprintf("podSet %s: %s", ps.Name, msg)
		}
	}
	return ""
}

// ClaimsThroughTemplates reports whether a pod of the workload claims
// devices through a ResourceClaimTemplate.
func ClaimsThroughTemplates(wl *kueue.Workload) bool {
	for i := range wl.Spec.PodSets {
		for _, pc := range wl.Spec.PodSets[i].Template.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName != nil {
				return true
			}
		}
	}
	return false
}
