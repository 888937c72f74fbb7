package provisioning

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestBuildAsksForTheManagedPodSetsOnTheirFlavor(t *testing.T) {
	wl := reserved(kueue.CheckStatePending, 0)
	wl.Annotations = map[string]string{ParameterAnnotationPrefix + "maxRunDurationSeconds": "600", "other": "x"}
	cfg := gpuConfig()
	cfg.Parameters = map[string]kueue.Parameter{"maxRunDurationSeconds": "60", "zone": "a"}
	flavors := map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{"gpu-flavor": {
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-flavor"},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"gpu": "a100"},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}},
	}}
	plan := Build(wl, "prov", 2, cfg, flavors)
	m := plan.Meta
	if m.Name != "job-a-prov-2" || m.Namespace != "ns" {
		t.Errorf("request metadata: %+v", m)
	}
	if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != "uid-a" || !*m.OwnerReferences[0].Controller {
		t.Errorf("the workload must control the request: %+v", m.OwnerReferences)
	}
	if plan.ClassName != cfg.ProvisioningClassName {
		t.Errorf("class %q", plan.ClassName)
	}
	if plan.Parameters["maxRunDurationSeconds"] != "600" || plan.Parameters["zone"] != "a" || len(plan.Parameters) != 2 {
		t.Errorf("parameters: the job's annotation must win over the config: %v", plan.Parameters)
	}
	if len(plan.Templates) != 1 || plan.Counts[0] != 2 {
		t.Fatalf("want one pod set of the 2 admitted GPU pods, got %v", plan.Counts)
	}
	tmpl := plan.Templates[0]
	if tmpl.Name != "ppt-job-a-prov-2-main" || tmpl.OwnerReferences[0].UID != "uid-a" {
		t.Errorf("template %+v", tmpl.ObjectMeta)
	}
	spec := tmpl.Template.Spec
	if spec.NodeSelector["gpu"] != "a100" || len(spec.Tolerations) != 1 || spec.Containers[0].Image != "img" {
		t.Errorf("the template must carry the flavor's node labels and tolerations: %+v", spec)
	}
	if wl.Spec.PodSets[0].Template.Spec.NodeSelector != nil {
		t.Error("Build changed the workload's own template")
	}
}

func TestBuildMergesEqualPodSetsUnderAPolicy(t *testing.T) {
	wl := reserved(kueue.CheckStatePending, 0)
	wl.Spec.PodSets[1] = *wl.Spec.PodSets[0].DeepCopy()
	wl.Spec.PodSets[1].Name, wl.Spec.PodSets[1].Count = "workers", 4
	wl.Spec.PodSets[1].Template.Spec.Containers[0].Image = "other-image"
	wl.Status.Admission.PodSetAssignments[1] = kueue.PodSetAssignment{Name: "workers",
		Flavors: wl.Status.Admission.PodSetAssignments[0].Flavors}
	cfg := gpuConfig()
	if plan := Build(wl, "prov", 1, cfg, nil); len(plan.Templates) != 2 {
		t.Fatalf("without a policy every PodSet is its own: %v", plan.PodSets)
	}
	policy := kueue.IdenticalPodTemplates
	cfg.PodSetMergePolicy = &policy
	if plan := Build(wl, "prov", 1, cfg, nil); len(plan.Templates) != 2 {
		t.Fatalf("different images are different templates: %v", plan.PodSets)
	}
	policy = kueue.IdenticalWorkloadSchedulingRequirements
	plan := Build(wl, "prov", 1, cfg, nil)
	if len(plan.Templates) != 1 || plan.Counts[0] != 6 || len(plan.PodSets[0]) != 2 {
		t.Fatalf("equal requirements merge into one pod set of 2+4 pods: %v %v", plan.Counts, plan.PodSets)
	}
}

func TestNamesFitTheAPI(t *testing.T) {
	long := strings.Repeat("a", 250)
	a, b := RequestName(long, "check", 1), RequestName(long+"b", "check", 1)
	for _, n := range []string{a, b, RequestName(long, "check", 12), TemplateName(a, strings.Repeat("p", 63))} {
		if len(n) > maxNameLength {
			t.Errorf("%d characters: %s", len(n), n)
		}
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%s: %v", n, errs)
		}
	}
	if a == b {
		t.Error("two long workload names share a request name")
	}
	if !strings.HasSuffix(RequestName(long, "check", 12), "-12") {
		t.Error("a long name lost its attempt")
	}
}

func FuzzNames(f *testing.F) {
	f.Add("job-a", "prov", int32(1), "main")
	f.Add(strings.Repeat("x", 253), strings.Repeat("c.", 120), int32(1<<30), strings.Repeat("p", 63))
	f.Fuzz(func(t *testing.T, wl, check string, attempt int32, podSet string) {
		if validation.IsDNS1123Subdomain(wl) != nil || validation.IsDNS1123Subdomain(check) != nil ||
			validation.IsDNS1123Label(podSet) != nil || attempt < 1 {
			return
		}
		n := RequestName(wl, check, attempt)
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Fatalf("request name %q: %v", n, errs)
		}
		if errs := validation.IsDNS1123Subdomain(TemplateName(n, podSet)); len(errs) > 0 {
			t.Fatalf("template name: %v", errs)
		}
	})
}
