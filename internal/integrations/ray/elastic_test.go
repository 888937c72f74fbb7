package ray

import (
	"context"
	"slices"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
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
