package batchjob

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestTopologyRequestCarriesTheCompletionIndex(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	j := newJob(ptr.To[int32](4), ptr.To[int32](4))
	j.Spec.Template.Annotations = map[string]string{jobframework.PodSetPreferredTopologyAnnotation: "example.com/rack"}
	wl, err := jobframework.NewWorkload(context.Background(), fake.NewClientBuilder().WithScheme(scheme).Build(), New(j), GVK, jobframework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := wl.Spec.PodSets[0].TopologyRequest
	if tr == nil || ptr.Deref(tr.Preferred, "") != "example.com/rack" || ptr.Deref(tr.PodIndexLabel, "") != batchv1.JobCompletionIndexAnnotation {
		t.Fatalf("topology request %+v, want preferred rack indexed by %s", tr, batchv1.JobCompletionIndexAnnotation)
	}
}

func TestWebhookNamesTheTemplateAnnotation(t *testing.T) {
	w := &jobframework.Webhook{Integration: Integration, Validate: validate}
	j := newJob(ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.Template.Annotations = map[string]string{
		jobframework.PodSetSliceRequiredTopologyAnnotation: "example.com/rack", jobframework.PodSetSliceSizeAnnotation: "3"}
	err := w.ValidateCreate(context.Background(), j)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]") {
		t.Fatalf("a slice of 3 pods in a Job of 2: %v, want Invalid naming the annotation", err)
	}
	j.Spec.Template.Annotations[jobframework.PodSetSliceSizeAnnotation] = "2"
	if err := w.ValidateCreate(context.Background(), j); err != nil {
		t.Fatalf("a valid slice: %v", err)
	}
}
