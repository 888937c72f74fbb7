package lifecycle

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func exact(name, class string, mode resourcev1.DeviceAllocationMode, count int64) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: mode, Count: count}}
}

func template(reqs ...resourcev1.DeviceRequest) *ClaimTemplate {
	return NewClaimTemplate(&resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: reqs}}})
}

func claimsOf(templates map[string]*ClaimTemplate) *Claims {
	return &Claims{
		Classes: map[string]corev1.ResourceName{"gpu.example.com": "example.com/gpu", "big-gpu.example.com": "example.com/gpu",
			"mig.example.com": ""},
		Template: func(name string) (*ClaimTemplate, bool) { t, ok := templates[name]; return t, ok },
	}
}

// claiming returns a workload whose pods claim the named templates (and
// one claim by name, which is nobody's quota here).
func claiming(templates ...string) *kueue.Workload {
	wl := newWL().wl
	spec := &wl.Spec.PodSets[0].Template.Spec
	spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: "shared", ResourceClaimName: ptr.To("shared-claim")})
	for _, t := range templates {
		spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: "c-" + t, ResourceClaimTemplateName: ptr.To(t)})
	}
	return wl
}

func TestPodClaimsCountDevicesPerLogicalResource(t *testing.T) {
	c := claimsOf(map[string]*ClaimTemplate{
		"one":   template(exact("gpu", "gpu.example.com", resourcev1.DeviceAllocationModeExactCount, 0)),
		"three": template(exact("a", "gpu.example.com", resourcev1.DeviceAllocationModeExactCount, 2), exact("b", "big-gpu.example.com", "", 1)),
		"mig":   template(exact("slice", "mig.example.com", resourcev1.DeviceAllocationModeExactCount, 4)),
	})
	wl := claiming("one", "three", "mig")
	got, msg := c.PodClaims(&wl.Spec.PodSets[0].Template.Spec)
	if msg != "" || len(got) != 1 || got["example.com/gpu"] != 4 {
		t.Fatalf("claims %v (%q), want 4 example.com/gpu (1 by default, 2+1 from two classes; counter-mapped classes and claims by name not counted)", got, msg)
	}
	if msg := CheckClaims(wl, c); msg != "" {
		t.Errorf("countable claims refused: %s", msg)
	}
	info := Info(wl, &View{Claims: c}, &Options{})
	if per := info.Shape.PodSets[0].PerPod["example.com/gpu"]; per != 4 {
		t.Errorf("the shape charges %d milli example.com/gpu per pod, want 4000", per)
	}
	if Info(wl, &View{}, &Options{}).Shape.PodSets[0].PerPod["example.com/gpu"] != 0 {
		t.Error("without deviceClassMappings claims are charged")
	}
}

func TestClaimsThatCannotBeCountedKeepTheWorkloadOut(t *testing.T) {
	c := claimsOf(map[string]*ClaimTemplate{
		"all":      template(exact("gpu", "gpu.example.com", resourcev1.DeviceAllocationModeAll, 0)),
		"unmapped": template(exact("fpga", "fpga.example.com", "", 1)),
		"choice": template(resourcev1.DeviceRequest{Name: "any", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "small", DeviceClassName: "gpu.example.com"}}}),
	})
	cases := map[string]string{
		"missing":  "ResourceClaimTemplate missing of claim c-missing does not exist",
		"all":      "allocation mode All",
		"unmapped": "DeviceClass fpga.example.com (request fpga of ResourceClaimTemplate unmapped) is not in resources.deviceClassMappings",
		"choice":   "only exact device requests",
	}
	for name, want := range cases {
		wl := claiming(name)
		msg := CheckClaims(wl, c)
		if !strings.Contains(msg, want) || !strings.HasPrefix(msg, "podSet main: ") {
			t.Errorf("%s: message %q, want it to name the PodSet and say %q", name, msg, want)
		}
		v := healthyView()
		v.Claims = c
		if p := Place(wl, v); p != Aside {
			t.Errorf("%s: placed %s, want Aside", name, p)
		}
		s := Next(wl, v, &Options{}, t0)
		if s.Action != SetPending || s.Reason != kueue.WorkloadReasonInadmissible || s.Message != msg || s.EventReason != kueue.WorkloadReasonInadmissible {
			t.Errorf("%s: step %+v, want SetPending Inadmissible with the message and an event", name, s)
		}
	}
}
