package appwrapper

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func names(ps []kueue.PodSet) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s=%d", p.Name, p.Count))
	}
	return out
}

// An AppWrapper is one PodSet per pod set of its components, in order,
// named "<name>-<i>": inferred ones (a Job's min(parallelism,
// completions)) and declared ones (replicas); the templates are the
// wrapped pod templates.
func TestPodSetsOfComponents(t *testing.T) {
	aw := newAppWrapper(t)
	ps, err := New(aw).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ps); !slices.Equal(got, []string{"aw-0=2", "aw-1=3"}) {
		t.Fatalf("PodSets %v, want aw-0=2 aw-1=3", got)
	}
	if cpu := ps[1].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; cpu.String() != "500m" {
		t.Fatalf("the Deployment's PodSet asks for %s cpu, want 500m", cpu.String())
	}
	if ps[0].Template.Spec.NodeSelector["team"] != "ml" {
		t.Fatalf("template node selector %v, want the wrapped one", ps[0].Template.Spec.NodeSelector)
	}

	// A declared pod set without replicas counts 1; the status's pod sets,
	// once the AppWrapper controller recorded them, win.
	aw.Spec.Components[1].DeclaredPodSets[0].Replicas = nil
	if ps, _ = New(aw).PodSets(); !slices.Equal(names(ps), []string{"aw-0=2", "aw-1=1"}) {
		t.Fatalf("PodSets %v, want aw-1 of 1 pod", names(ps))
	}
	aw.Status.ComponentStatus = []awv1beta2.AppWrapperComponentStatus{
		{PodSets: []awv1beta2.AppWrapperPodSet{{Path: "template.spec.template", Replicas: ptr.To[int32](4)}}},
		{PodSets: []awv1beta2.AppWrapperPodSet{{Path: "template.spec.template", Replicas: ptr.To[int32](5)}}},
	}
	if ps, _ = New(aw).PodSets(); !slices.Equal(names(ps), []string{"aw-0=4", "aw-1=5"}) {
		t.Fatalf("PodSets %v, want the status's counts", names(ps))
	}
}

// A component whose pod set path leads nowhere, or that has no template,
// is an error naming the field.
func TestPodSetsErrorsNameTheField(t *testing.T) {
	aw := newAppWrapper(t)
	aw.Spec.Components[1].DeclaredPodSets[0].Path = "template.spec.nothing"
	if _, err := New(aw).PodSets(); err == nil || !strings.Contains(err.Error(), "spec.components[1].podSets[0].path") {
		t.Fatalf("error %v, want one naming spec.components[1].podSets[0].path", err)
	}
	aw = newAppWrapper(t)
	aw.Spec.Components[0].Template.Raw = nil
	if _, err := New(aw).PodSets(); err == nil || !strings.Contains(err.Error(), "spec.components[0].template") {
		t.Fatalf("error %v, want one naming spec.components[0].template", err)
	}
}

// Suspend sets spec.suspend; an admission fills every component's
// podSetInfos (the templates stay as they are) and resumes; restoring
// clears them.
func TestRunAndRestore(t *testing.T) {
	aw := newAppWrapper(t)
	job := New(aw)
	job.Suspend()
	if !aw.Spec.Suspend || !job.IsSuspended() {
		t.Fatal("Suspend must set spec.suspend")
	}
	before := aw.DeepCopy()
	tol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "a", Effect: corev1.TaintEffectNoSchedule}
	infos := []jobframework.PodSetInfo{
		{Name: "aw-0", Count: 2, NodeSelector: map[string]string{"pool": "a"}, Tolerations: []corev1.Toleration{tol},
			Labels: map[string]string{jobframework.PodSetLabel: "aw-0"}, Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}},
		{Name: "aw-1", Count: 3, NodeSelector: map[string]string{"pool": "b"}},
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	if job.IsSuspended() {
		t.Fatal("still suspended after the admission")
	}
	c0, c1 := aw.Spec.Components[0], aw.Spec.Components[1]
	if len(c0.PodSetInfos) != 1 || c0.PodSetInfos[0].NodeSelector["pool"] != "a" || len(c0.PodSetInfos[0].Tolerations) != 1 ||
		c0.PodSetInfos[0].Labels[jobframework.PodSetLabel] != "aw-0" || c0.PodSetInfos[0].Annotations[jobframework.WorkloadAnnotation] != "wl" {
		t.Fatalf("component 0 podSetInfos %+v", c0.PodSetInfos)
	}
	if len(c1.PodSetInfos) != 1 || c1.PodSetInfos[0].NodeSelector["pool"] != "b" {
		t.Fatalf("component 1 podSetInfos %+v", c1.PodSetInfos)
	}
	if string(c0.Template.Raw) != string(before.Spec.Components[0].Template.Raw) {
		t.Fatal("the admission must not change the component's template")
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(nil) {
		t.Fatal("restoring reported no change")
	}
	if aw.Spec.Components[0].PodSetInfos != nil || aw.Spec.Components[1].PodSetInfos != nil {
		t.Fatalf("podSetInfos left after restoring: %+v", aw.Spec.Components)
	}
	if job.RestorePodSetsInfo(nil) {
		t.Fatal("restoring twice reported a change")
	}
}

// An admission that misses a pod set, or has one too many, is refused
// and leaves the AppWrapper suspended.
func TestRunWithWrongAdmission(t *testing.T) {
	aw := newAppWrapper(t)
	job := New(aw)
	job.Suspend()
	if err := job.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "aw-0"}}); err == nil || !strings.Contains(err.Error(), "aw-1") {
		t.Fatalf("error %v, want one naming the missing PodSet aw-1", err)
	}
	if err := job.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "aw-0"}, {Name: "aw-1"}, {Name: "aw-2"}}); err == nil {
		t.Fatal("an admission with an extra PodSet must be refused")
	}
	if !job.IsSuspended() {
		t.Fatal("a refused admission must leave the AppWrapper suspended")
	}
}

// Finished follows status.phase; a failed AppWrapper whose resources are
// still deployed is not finished yet. Active and PodsReady follow the
// QuotaReserved and PodsReady conditions.
func TestFinishedActiveReady(t *testing.T) {
	aw := newAppWrapper(t)
	job := New(aw)
	if _, _, fin := job.Finished(); fin {
		t.Fatal("a new AppWrapper is not finished")
	}
	aw.Status.Phase = awv1beta2.AppWrapperSucceeded
	if msg, ok, fin := job.Finished(); !fin || !ok || msg == "" {
		t.Fatalf("Succeeded: finished %v success %v msg %q", fin, ok, msg)
	}
	aw.Status.Phase = awv1beta2.AppWrapperFailed
	meta.SetStatusCondition(&aw.Status.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionTrue, Reason: "R"})
	if _, _, fin := job.Finished(); fin {
		t.Fatal("a Failed AppWrapper whose resources are still deployed is not finished")
	}
	meta.SetStatusCondition(&aw.Status.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionFalse, Reason: "R"})
	if _, ok, fin := job.Finished(); !fin || ok {
		t.Fatalf("Failed: finished %v success %v", fin, ok)
	}
	if job.IsActive() || job.PodsReady() {
		t.Fatal("no condition: not active, not ready")
	}
	meta.SetStatusCondition(&aw.Status.Conditions, metav1.Condition{Type: string(awv1beta2.QuotaReserved), Status: metav1.ConditionTrue, Reason: "R"})
	meta.SetStatusCondition(&aw.Status.Conditions, metav1.Condition{Type: string(awv1beta2.PodsReady), Status: metav1.ConditionTrue, Reason: "R"})
	if !job.IsActive() || !job.PodsReady() {
		t.Fatal("QuotaReserved and PodsReady true: active and ready")
	}
}
