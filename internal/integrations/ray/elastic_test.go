package ray

import (
	"context"
	"slices"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// An elastic RayCluster may autoscale: the webhook accepts it and holds
// its head's and workers' pods with the elastic gate; its head PodSet
// counts the autoscaler KubeRay adds (its default resources, or the
// cluster's autoscalerOptions.resources).
func TestElasticRayClusterAutoscales(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	rc := newRayCluster()
	rc.Annotations = map[string]string{kueue.ElasticJobAnnotation: "true"}
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	if _, err := rayClusterWebhook(c).ValidateCreate(ctx, rc); err != nil {
		t.Fatalf("an elastic autoscaling RayCluster was refused: %v", err)
	}
	if err := rayClusterWebhook(c).Default(ctx, rc); err != nil {
		t.Fatal(err)
	}
	gated := func(t corev1.PodTemplateSpec) bool {
		return slices.ContainsFunc(t.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.ElasticJobSchedulingGate })
	}
	if !gated(rc.Spec.HeadGroupSpec.Template) || !gated(rc.Spec.WorkerGroupSpecs[0].Template) {
		t.Fatal("the elastic RayCluster's head and worker templates are not gated")
	}

	podSets, err := NewRayCluster(rc).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	head := podSets[0].Template.Spec.Containers
	if last := head[len(head)-1]; last.Name != "autoscaler" || last.Resources.Requests.Cpu().String() != "500m" {
		t.Fatalf("head containers %v: want KubeRay's autoscaler with 500m cpu", head)
	}
	if n := len(rc.Spec.HeadGroupSpec.Template.Spec.Containers); n != len(head)-1 {
		t.Fatalf("the RayCluster's own head template was changed (%d containers)", n)
	}
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Resources: &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}
	podSets, _ = NewRayCluster(rc).PodSets()
	head = podSets[0].Template.Spec.Containers
	if got := head[len(head)-1].Resources.Requests.Cpu().String(); got != "1" {
		t.Errorf("autoscaler cpu %s, want autoscalerOptions' 1", got)
	}

	plain := newRayCluster()
	plain.Spec.EnableInTreeAutoscaling = ptr.To(true)
	if _, err := rayClusterWebhook(c).ValidateCreate(ctx, plain); err == nil {
		t.Error("an autoscaling RayCluster that is not elastic was accepted")
	}
	old := newRayCluster()
	if _, err := rayClusterWebhook(c).ValidateUpdate(ctx, old, rc); err == nil {
		t.Error("the elastic opt-in was added to an existing RayCluster")
	}
}

// An elastic RayJob may autoscale: the webhook accepts it and holds its
// cluster's head and worker pods (not its submitter's); while the
// operator's cluster for it exists, its worker PodSets count that
// cluster's workers, which the autoscaler changes, and its held pods are
// those of that cluster.
func TestElasticRayJobCountsItsLiveCluster(t *testing.T) {
	ctx := context.Background()
	j := newRayJob()
	j.UID = "rj-uid"
	j.Annotations = map[string]string{kueue.ElasticJobAnnotation: "true"}
	j.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	c := testClient(t)
	if _, err := rayJobWebhook(c).ValidateCreate(ctx, j); err != nil {
		t.Fatalf("an elastic autoscaling RayJob was refused: %v", err)
	}
	if err := rayJobWebhook(c).Default(ctx, j); err != nil {
		t.Fatal(err)
	}
	gated := func(t corev1.PodTemplateSpec) bool {
		return slices.ContainsFunc(t.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.ElasticJobSchedulingGate })
	}
	if !gated(j.Spec.RayClusterSpec.HeadGroupSpec.Template) || !gated(j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template) {
		t.Fatal("the elastic RayJob's head and worker templates are not gated")
	}

	job := NewRayJob(j).(*RayJob)
	counts := func() map[kueue.PodSetReference]int32 {
		t.Helper()
		if err := job.LoadPrerequisites(ctx, c); err != nil {
			t.Fatal(err)
		}
		podSets, err := job.PodSets()
		if err != nil {
			t.Fatal(err)
		}
		out := map[kueue.PodSetReference]int32{}
		for _, ps := range podSets {
			out[ps.Name] = ps.Count
		}
		return out
	}
	spec := ptr.Deref(j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas, 0)
	if got := counts()["small"]; got != spec {
		t.Fatalf("before the cluster exists: %d workers, want the spec's %d", got, spec)
	}
	if sel, podSets := job.ElasticPods(); sel != nil || !slices.Equal(podSets, []kueue.PodSetReference{HeadPodSet, "small", "tpu"}) {
		t.Fatalf("before the cluster exists: pods %v of %v, want none of head, small and tpu", sel, podSets)
	}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rj-cluster",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: j.Name, UID: j.UID, Controller: ptr.To(true)}}},
		Spec: *j.Spec.RayClusterSpec.DeepCopy()}
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4)
	rc.Spec.WorkerGroupSpecs[0].NumOfHosts = 2
	if err := c.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	j.Status.RayClusterName = rc.Name
	if got := counts()["small"]; got != 8 {
		t.Errorf("with the cluster at 4 replicas of 2 hosts: %d workers, want 8", got)
	}
	if sel, _ := job.ElasticPods(); sel["ray.io/cluster"] != rc.Name {
		t.Errorf("held pods selected by %v, want the cluster's label", sel)
	}
	if reqs := job.PrerequisiteWatches(c)[0].Jobs(ctx, rc); len(reqs) != 1 || reqs[0].Name != j.Name {
		t.Errorf("a change of the cluster brings back %v, want the RayJob", reqs)
	}
	// A worker's copy (it names a prebuilt Workload) keeps its admitted
	// counts: its slices do not follow the cluster.
	j.Labels[jobframework.PrebuiltWorkloadLabel] = "wl"
	if got := counts()["small"]; got != spec {
		t.Errorf("a worker's copy counts %d workers, want the spec's %d", got, spec)
	}

	plain := newRayJob()
	plain.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	if _, err := rayJobWebhook(c).ValidateCreate(ctx, plain); err == nil {
		t.Error("an autoscaling RayJob that is not elastic was accepted")
	}
}
