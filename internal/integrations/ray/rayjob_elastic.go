package ray

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// An elastic RayJob (annotated kueue.ElasticJobAnnotation) whose cluster
// autoscales (spec.rayClusterSpec.enableInTreeAutoscaling) is resized by
// the Ray autoscaler, which changes the worker groups' replicas of the
// RayCluster the Ray operator made for it (status.rayClusterName), not the
// RayJob. Its PodSets therefore count the workers of that live cluster:
// the job reconciler reads it at the start of each pass
// (LoadPrerequisites) and is brought back by the cluster's changes
// (PrerequisiteWatches); the cluster's pods are found by its name
// (ElasticPods). The Workload slices then follow as for any elastic job
// (docs/design/elastic.md).

var (
	_ jobframework.JobWithPrerequisites = (*RayJob)(nil)
	_ jobframework.JobWithElasticPods   = (*RayJob)(nil)
)

// rayClusterLabel names the RayCluster on each of its pods.
const rayClusterLabel = "ray.io/cluster"

// autoscales reports an elastic RayJob whose cluster autoscales and whose
// slices follow it (not a worker's copy, nor one MultiKueue runs: those
// would be stopped for growing).
func (j *RayJob) autoscales() bool {
	spec := j.job.Spec.RayClusterSpec
	return spec != nil && ptr.Deref(spec.EnableInTreeAutoscaling, false) && jobframework.SlicesFollow(j)
}

// LoadPrerequisites reads the workers of an autoscaling elastic RayJob's
// live cluster; a cluster not made yet (or not the job's) leaves the
// counts of spec.rayClusterSpec.
func (j *RayJob) LoadPrerequisites(ctx context.Context, c client.Reader) error {
	j.live = nil
	name := j.job.Status.RayClusterName
	if !j.autoscales() || name == "" {
		return nil
	}
	var rc rayv1.RayCluster
	if err := c.Get(ctx, types.NamespacedName{Namespace: j.job.Namespace, Name: name}, &rc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading RayCluster %s of RayJob %s: %w", name, j.job.Name, err)
	}
	if !metav1.IsControlledBy(&rc, j.job) {
		return nil
	}
	j.live = map[kueue.PodSetReference]int32{}
	for i := range rc.Spec.WorkerGroupSpecs {
		w := &rc.Spec.WorkerGroupSpecs[i]
		j.live[workerPodSet(w)] = workerCount(w)
	}
	return nil
}

// PrerequisiteWatches brings a RayJob back when the RayCluster it controls
// changes.
func (j *RayJob) PrerequisiteWatches(client.Reader) []jobframework.PrerequisiteWatch {
	return []jobframework.PrerequisiteWatch{{
		Object: &rayv1.RayCluster{},
		Jobs: func(_ context.Context, obj client.Object) []reconcile.Request {
			ref := metav1.GetControllerOf(obj)
			if ref == nil || ref.Kind != RayJobGVK.Kind || ref.APIVersion != RayJobGVK.GroupVersion().String() {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
		},
	}}
}

// ElasticPods selects the pods of the job's cluster (the submitter is not
// held) and names the PodSets they make up.
func (j *RayJob) ElasticPods() (map[string]string, []kueue.PodSetReference) {
	spec := j.job.Spec.RayClusterSpec
	if spec == nil {
		return nil, nil
	}
	var podSets []kueue.PodSetReference
	for _, t := range clusterTemplates(spec) {
		podSets = append(podSets, t.name)
	}
	if j.job.Status.RayClusterName == "" {
		return nil, podSets
	}
	return map[string]string{rayClusterLabel: j.job.Status.RayClusterName}, podSets
}

// liveCounts puts the live cluster's worker counts into the PodSets.
func (j *RayJob) liveCounts(podSets []kueue.PodSet) {
	for i := range podSets {
		if n, ok := j.live[podSets[i].Name]; ok {
			podSets[i].Count = n
		}
	}
}
