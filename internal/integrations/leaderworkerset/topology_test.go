package leaderworkerset

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func tasLWS() *lwsv1.LeaderWorkerSet {
	tas := map[string]string{jobframework.PodSetRequiredTopologyAnnotation: "example.com/rack", "other": "x"}
	return &lwsv1.LeaderWorkerSet{ObjectMeta: metav1.ObjectMeta{Name: "infer", Namespace: "ns", UID: "u"},
		Spec: lwsv1.LeaderWorkerSetSpec{LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{Size: ptr.To[int32](4),
			LeaderTemplate: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tas}},
			WorkerTemplate: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tas}}}}}
}

func TestGroupWorkloadAsksForTheTopology(t *testing.T) {
	lws := tasLWS()
	wl, err := jobframework.BuildWorkload(context.Background(), nil, lws, "wl", PodSets(lws), podIndex, jobframework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range wl.Spec.PodSets {
		tr := ps.TopologyRequest
		if tr == nil || ptr.Deref(tr.Required, "") != "example.com/rack" || ptr.Deref(tr.PodIndexLabel, "") != lwsv1.WorkerIndexLabelKey {
			t.Errorf("PodSet %s: topology request %+v, want required rack indexed by the worker index", ps.Name, tr)
		}
		if _, ok := ps.Template.Annotations["other"]; ok {
			t.Errorf("PodSet %s carries annotations other than the topology ones: %v", ps.Name, ps.Template.Annotations)
		}
	}
}

func TestWorkersStartAtIndexOne(t *testing.T) {
	lws := tasLWS()
	lws.Labels = map[string]string{jobframework.QueueNameLabel: "lq"}
	scheme := runtime.NewScheme()
	if err := lwsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(lws).Build()
	worker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "infer-0-1",
		Labels:      map[string]string{lwsv1.SetNameLabelKey: "infer", lwsv1.GroupIndexLabelKey: "0"},
		Annotations: map[string]string{lwsv1.LeaderPodNameAnnotationKey: "infer-0"}}}
	if _, err := defaultPod(context.Background(), c, worker); err != nil {
		t.Fatal(err)
	}
	if worker.Annotations[jobframework.PodIndexOffsetAnnotation] != "1" {
		t.Errorf("a worker's annotations %v, want a pod index offset of 1", worker.Annotations)
	}
	leader := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "infer-0", Labels: map[string]string{lwsv1.SetNameLabelKey: "infer"}}}
	if _, err := defaultPod(context.Background(), c, leader); err != nil {
		t.Fatal(err)
	}
	if _, ok := leader.Annotations[jobframework.PodIndexOffsetAnnotation]; ok {
		t.Error("the leader has no offset")
	}
}

func TestWebhookChecksTheTemplates(t *testing.T) {
	lws := tasLWS()
	lws.Spec.LeaderWorkerTemplate.WorkerTemplate.Annotations = map[string]string{
		jobframework.PodSetSliceRequiredTopologyAnnotation: "example.com/rack", jobframework.PodSetSliceSizeAnnotation: "4"}
	_, err := (&Webhook{}).ValidateCreate(context.Background(), lws)
	if err == nil || !strings.Contains(err.Error(), "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations[kueue.x-k8s.io/podset-slice-size]") {
		t.Fatalf("a slice of 4 among 3 workers: %v, want an error naming the worker template's annotation", err)
	}
}
