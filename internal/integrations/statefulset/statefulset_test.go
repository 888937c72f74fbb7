package statefulset

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestDefaultMarksTheTemplateAndPodsGetTheReplicas(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kueue.AddToScheme(scheme)
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, s.DeepCopy()).Build()
	w := &Webhook{Client: c}
	if err := w.Default(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	tl, ta := s.Spec.Template.Labels, s.Spec.Template.Annotations
	if tl[jobframework.PodGroupNameLabel] != GroupName("db") || !strings.HasPrefix(GroupName("db"), "statefulset-db-") ||
		ta[jobframework.SuspendingParentAnnotation] != FrameworkName || ta[jobframework.PodGroupServingAnnotation] != "true" ||
		ta[jobframework.PodGroupFastAdmissionAnnotation] != "true" || tl[jobframework.QueueNameLabel] != "lq" {
		t.Fatalf("template after defaulting: labels %v annotations %v", tl, ta)
	}
	if _, ok := ta[jobframework.PodGroupTotalCountAnnotation]; ok {
		t.Error("the total count must not be on the template: a scale would roll the pods")
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-0",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Controller: ptr.To(true)}}}}
	if managed, err := defaultPod(context.Background(), c, p); err != nil || !managed || p.Annotations[jobframework.PodGroupTotalCountAnnotation] != "3" {
		t.Errorf("defaultPod: %v %v, annotations %v; want the total count 3", managed, err, p.Annotations)
	}
	moved := s.DeepCopy()
	moved.Labels[jobframework.QueueNameLabel] = "other"
	if _, err := w.ValidateUpdate(context.Background(), s, moved); err == nil {
		t.Error("the queue name of a StatefulSet cannot change")
	}
	scaled := s.DeepCopy()
	scaled.Spec.Replicas = ptr.To[int32](5)
	if _, err := w.ValidateUpdate(context.Background(), s, scaled); err != nil {
		t.Errorf("scaling is allowed: %v", err)
	}
}

func TestPodsNameTheirIndexLabelAndTemplatesAreChecked(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(s.DeepCopy()).Build()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-0",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Controller: ptr.To(true)}}}}
	if _, err := defaultPod(context.Background(), c, p); err != nil {
		t.Fatal(err)
	}
	if p.Annotations[jobframework.PodGroupPodIndexLabelAnnotation] != appsv1.PodIndexLabel {
		t.Errorf("pod annotations %v, want the pod index label named", p.Annotations)
	}
	s.Spec.Template.Annotations = map[string]string{jobframework.PodSetRequiredTopologyAnnotation: "example.com/rack",
		jobframework.PodSetPreferredTopologyAnnotation: "example.com/block"}
	w := &Webhook{}
	if _, err := w.ValidateCreate(context.Background(), s); err == nil ||
		!strings.Contains(err.Error(), "spec.template.metadata.annotations[kueue.x-k8s.io/podset-preferred-topology]") {
		t.Fatalf("required and preferred together: %v, want an error naming the annotation", err)
	}
	// Scaling (to zero too) is never refused for the annotations.
	s.Spec.Template.Annotations = map[string]string{jobframework.PodSetSliceRequiredTopologyAnnotation: "example.com/rack",
		jobframework.PodSetSliceSizeAnnotation: "2"}
	zero := s.DeepCopy()
	zero.Spec.Replicas = ptr.To[int32](0)
	if _, err := w.ValidateUpdate(context.Background(), s, zero); err != nil {
		t.Errorf("scaling to zero: %v", err)
	}
}
