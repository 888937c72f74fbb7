package pod

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func gateNames(p *corev1.Pod) []string {
	var out []string
	for _, g := range p.Spec.SchedulingGates {
		out = append(out, g.Name)
	}
	return out
}

func TestDefaultAddsTheTopologyGateToTopologyPods(t *testing.T) {
	w := testWebhook(t)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{jobframework.QueueNameLabel: "lq"},
		Annotations: map[string]string{jobframework.PodSetRequiredTopologyAnnotation: "example.com/rack"}}}
	if err := w.Default(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := gateNames(p); !slices.Equal(got, []string{jobframework.AdmissionGate, jobframework.TopologyGate}) {
		t.Errorf("gates %v, want the admission and the topology gate", got)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}}}
	if err := w.Default(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	if got := gateNames(plain); !slices.Equal(got, []string{jobframework.AdmissionGate}) {
		t.Errorf("a pod that asks for no topology: gates %v, want the admission gate only", got)
	}
}

func TestValidateCreateChecksTopologyAnnotations(t *testing.T) {
	w := testWebhook(t)
	p := member("a", "g", 4, "1", "")
	p.Annotations[jobframework.PodSetSliceRequiredTopologyAnnotation] = "example.com/rack"
	p.Annotations[jobframework.PodSetSliceSizeAnnotation] = "5"
	_, err := w.ValidateCreate(context.Background(), &p)
	if err == nil || !strings.Contains(err.Error(), "metadata.annotations[kueue.x-k8s.io/podset-slice-size]") {
		t.Fatalf("a slice of 5 in a group of 4: %v, want an error naming the annotation", err)
	}
}

func TestApplyAdmissionLiftsTheTopologyGateOnlyWithoutAnAssignment(t *testing.T) {
	gated := func() corev1.Pod {
		p := member("a", "g", 1, "1", "")
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: jobframework.TopologyGate})
		return p
	}
	plainInfo := &jobframework.PodSetInfo{Name: "main", Labels: map[string]string{jobframework.PodSetLabel: "main"}}
	p := gated()
	if err := applyAdmission(&p, plainInfo); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.SchedulingGates) != 0 {
		t.Errorf("admitted on a flavor without topology: gates %v, want none", gateNames(&p))
	}
	tasInfo := &jobframework.PodSetInfo{Name: "main", Labels: map[string]string{jobframework.PodSetLabel: "main", jobframework.TASLabel: "true"},
		SchedulingGates: []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}}}
	p = gated()
	if err := applyAdmission(&p, tasInfo); err != nil {
		t.Fatal(err)
	}
	if got := gateNames(&p); !slices.Equal(got, []string{jobframework.TopologyGate}) || p.Labels[jobframework.TASLabel] != "true" {
		t.Errorf("admitted with a topology: gates %v labels %v, want the topology gate left for the ungater", got, p.Labels)
	}
	// A pod created without the topology gate cannot get it later.
	p = member("b", "g", 1, "1", "")
	if err := applyAdmission(&p, tasInfo); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.SchedulingGates) != 0 {
		t.Errorf("gates %v: a gate cannot be added to an existing pod", gateNames(&p))
	}
}

func TestGroupWorkloadTopologyRequestFromThePods(t *testing.T) {
	var pods []corev1.Pod
	for _, name := range []string{"a", "b"} {
		p := member(name, "g", 2, "1", "")
		p.Annotations[jobframework.PodSetRequiredTopologyAnnotation] = "example.com/rack"
		p.Annotations[jobframework.PodGroupPodIndexLabelAnnotation] = "example.com/index"
		pods = append(pods, p)
	}
	u := newUnit(true, "g", pods)
	sets, err := u.podSets()
	if err != nil {
		t.Fatal(err)
	}
	wl, err := jobframework.BuildWorkload(context.Background(), nil, u.ref(), "g", sets, podIndex, jobframework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := wl.Spec.PodSets[0].TopologyRequest
	if tr == nil || ptr.Deref(tr.Required, "") != "example.com/rack" || ptr.Deref(tr.PodIndexLabel, "") != "example.com/index" {
		t.Fatalf("topology request %+v, want required rack indexed by example.com/index", tr)
	}
}
