package jobframework

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

var jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

func TestWorkloadNameIsStableAndBounded(t *testing.T) {
	a := WorkloadName("train", "uid-1", jobGVK)
	if !strings.HasPrefix(a, "job-train-") || len(a) != len("job-train-")+hashLength {
		t.Fatalf("name %q, want job-train-<5 hex>", a)
	}
	if WorkloadName("train", "uid-1", jobGVK) != a {
		t.Fatal("the name must be deterministic")
	}
	if WorkloadName("train", "uid-2", jobGVK) == a {
		t.Fatal("a job recreated under the same name needs a new Workload name")
	}
	long := WorkloadName(strings.Repeat("x", 300), "uid", jobGVK)
	if len(long) != maxNameLength {
		t.Fatalf("a long name is cut to %d characters, got %d", maxNameLength, len(long))
	}
}

func TestValidateLabels(t *testing.T) {
	obj := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		QueueNameLabel: "Not_Valid", MaxExecTimeSecondsLabel: "-3", PriorityClassLabel: "high"}}}
	errs := ValidateLabels(obj)
	if len(errs) != 2 {
		t.Fatalf("errors %v, want the queue name and the max exec time", errs)
	}
	for _, e := range errs {
		if !strings.HasPrefix(e.Field, "metadata.labels[kueue.x-k8s.io/") {
			t.Errorf("error names %s", e.Field)
		}
	}
}

func TestValidateLabelChanges(t *testing.T) {
	with := func(l map[string]string) *batchv1.Job { return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: l}} }
	cases := []struct {
		name             string
		old, new         map[string]string
		oldSusp, newSusp bool
		wantErrs         int
	}{
		{"queue change while suspended", map[string]string{QueueNameLabel: "a"}, map[string]string{QueueNameLabel: "b"}, true, true, 0},
		{"queue change while running", map[string]string{QueueNameLabel: "a"}, map[string]string{QueueNameLabel: "b"}, false, false, 1},
		{"priority removed", map[string]string{PriorityClassLabel: "p"}, map[string]string{}, true, true, 1},
		{"priority added to running job", map[string]string{}, map[string]string{PriorityClassLabel: "p"}, false, false, 1},
		{"priority added while suspended", map[string]string{}, map[string]string{PriorityClassLabel: "p"}, true, true, 0},
		{"priority changed while running", map[string]string{PriorityClassLabel: "p"}, map[string]string{PriorityClassLabel: "q"}, false, false, 0},
	}
	for _, c := range cases {
		if errs := ValidateLabelChanges(with(c.old), with(c.new), c.oldSusp, c.newSusp); len(errs) != c.wantErrs {
			t.Errorf("%s: errors %v, want %d", c.name, errs, c.wantErrs)
		}
	}
}

func TestEnabledRejectsUnknownFrameworks(t *testing.T) {
	available := []Integration{{Name: "batch/job"}}
	cfg := &configapi.Configuration{Integrations: &configapi.Integrations{Frameworks: []string{"batch/job", "nope"}}}
	if _, err := Enabled(cfg, available); err == nil || !strings.Contains(err.Error(), "integrations.frameworks[1]") {
		t.Fatalf("error %v, want one naming integrations.frameworks[1]", err)
	}
	cfg.Integrations.Frameworks = []string{"batch/job"}
	if got, err := Enabled(cfg, available); err != nil || len(got) != 1 {
		t.Fatalf("enabled %v %v", got, err)
	}
}

func TestAdmissionInfosCombineFlavorsAndCheckUpdates(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	gpu := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "a100"}, Spec: kueue.ResourceFlavorSpec{
		NodeLabels:  map[string]string{"gpu": "a100"},
		Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}
	cpu := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "on-demand"}, Spec: kueue.ResourceFlavorSpec{
		NodeLabels: map[string]string{"pool": "on-demand"}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(gpu, cpu).Build()
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: "ns"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 4}}},
		Status: kueue.WorkloadStatus{
			Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{
				Name: "main", Count: ptr.To[int32](2),
				Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "a100", corev1.ResourceCPU: "on-demand"},
			}}},
			AdmissionChecks: []kueue.AdmissionCheckState{{Name: "prov", State: kueue.CheckStateReady,
				PodSetUpdates: []kueue.PodSetUpdate{{Name: "main", Annotations: map[string]string{"provisioned": "yes"}}}}},
		}}
	infos, err := AdmissionInfos(context.Background(), c, wl)
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	if info.Count != 2 || info.NodeSelector["gpu"] != "a100" || info.NodeSelector["pool"] != "on-demand" || len(info.Tolerations) != 1 {
		t.Fatalf("info %+v", info)
	}
	if info.Labels[PodSetLabel] != "main" || info.Labels[ClusterQueueLabel] != "cq" || info.Labels[LocalQueueLabel] != "lq" ||
		info.Annotations[WorkloadAnnotation] != "wl" || info.Annotations["provisioned"] != "yes" {
		t.Fatalf("metadata %+v %+v", info.Labels, info.Annotations)
	}
	wl.Status.Admission.PodSetAssignments[0].Flavors["memory"] = "missing"
	if _, err := AdmissionInfos(context.Background(), c, wl); err == nil {
		t.Fatal("a flavor that does not exist must be an error")
	}
}

func TestEnabledAddsRequiredFrameworks(t *testing.T) {
	pod := Integration{Name: PodFrameworkName}
	dep := Integration{Name: "deployment", Requires: []string{PodFrameworkName}}
	job := Integration{Name: "batch/job"}
	cfg := &configapi.Configuration{Integrations: &configapi.Integrations{Frameworks: []string{"batch/job", "deployment"}}}
	got, err := Enabled(cfg, []Integration{job, pod, dep})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range got {
		names = append(names, in.Name)
	}
	if strings.Join(names, ",") != "batch/job,deployment,pod" {
		t.Errorf("enabled %v, want batch/job, deployment and the pod integration it requires", names)
	}
	cfg.Integrations.Frameworks = []string{"kubeflow.org/mpijob"}
	if _, err := Enabled(cfg, []Integration{job, pod, dep}); err == nil || !strings.Contains(err.Error(), "known: batch/job, pod, deployment") {
		t.Errorf("an unknown framework: %v, want an error listing the known ones", err)
	}
	if got := WebhookPath("validate", schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}); got != "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset" {
		t.Errorf("WebhookPath = %q", got)
	}
}
