package deployment

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestDefaultMarksManagedDeploymentsOnly(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kueue.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}).Build()
	w := &Webhook{Client: c}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", Labels: map[string]string{
		jobframework.QueueNameLabel: "lq", jobframework.PriorityClassLabel: "high"}}}
	if err := w.Default(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	tl := d.Spec.Template.Labels
	if d.Spec.Template.Annotations[jobframework.SuspendingParentAnnotation] != FrameworkName || tl[jobframework.ManagedLabel] != "true" ||
		tl[jobframework.QueueNameLabel] != "lq" || tl[jobframework.PriorityClassLabel] != "high" {
		t.Errorf("template: %+v", d.Spec.Template.ObjectMeta)
	}
	plain := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	if err := w.Default(context.Background(), plain); err != nil || plain.Spec.Template.Annotations != nil {
		t.Errorf("a Deployment without a queue name is left alone (%v)", err)
	}
	ready := d.DeepCopy()
	ready.Status.ReadyReplicas = 1
	moved := ready.DeepCopy()
	moved.Labels[jobframework.QueueNameLabel] = "other"
	if _, err := w.ValidateUpdate(context.Background(), ready, moved); err == nil {
		t.Error("the queue of a Deployment with ready pods cannot change")
	}
}

func TestWebhookChecksTheTemplatesTopologyAnnotations(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	d.Spec.Template.Annotations = map[string]string{jobframework.PodSetSliceRequiredTopologyAnnotation: "example.com/rack",
		jobframework.PodSetSliceSizeAnnotation: "2"}
	_, err := (&Webhook{}).ValidateCreate(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]") {
		t.Fatalf("a slice of 2 for pods queued one by one: %v, want an error naming the annotation", err)
	}
}
