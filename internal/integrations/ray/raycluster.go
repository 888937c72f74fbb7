package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// RayClusterGVK is the RayCluster kind.
var RayClusterGVK = rayv1.GroupVersion.WithKind("RayCluster")

// RayCluster wraps a RayCluster: a long-running cluster, holding its
// quota while it exists; it never finishes. The Ray operator deletes its
// pods while spec.suspend is true.
type RayCluster struct{ cluster *rayv1.RayCluster }

var _ jobframework.Job = (*RayCluster)(nil)

// NewRayCluster wraps obj, which must be a *rayv1.RayCluster (a new one
// when nil).
func NewRayCluster(obj client.Object) jobframework.Job {
	if obj == nil {
		return &RayCluster{cluster: &rayv1.RayCluster{}}
	}
	return &RayCluster{cluster: obj.(*rayv1.RayCluster)}
}

// Object returns the RayCluster.
func (c *RayCluster) Object() client.Object { return c.cluster }

// IsSuspended reports spec.suspend.
func (c *RayCluster) IsSuspended() bool { return ptr.Deref(c.cluster.Spec.Suspend, false) }

// Suspend sets spec.suspend.
func (c *RayCluster) Suspend() { c.cluster.Spec.Suspend = ptr.To(true) }

// PodSets returns head (with the autoscaler of an autoscaling cluster) and
// the worker groups.
func (c *RayCluster) PodSets() ([]kueue.PodSet, error) {
	return clusterPodSets(&c.cluster.Spec, clusterTemplates(&c.cluster.Spec))
}

// RunWithPodSetsInfo puts the admission into the head's and the worker
// groups' pod templates and lifts spec.suspend.
func (c *RayCluster) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if err := applyAdmission(clusterTemplates(&c.cluster.Spec), infos); err != nil {
		return err
	}
	c.cluster.Spec.Suspend = ptr.To(false)
	return nil
}

// RestorePodSetsInfo puts the pod templates back.
func (c *RayCluster) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	return restore(clusterTemplates(&c.cluster.Spec), infos)
}

// Finished is never true: a RayCluster runs until it is deleted.
func (c *RayCluster) Finished() (string, bool, bool) { return "", false, false }

// IsActive reports pods the operator still reports: a ready cluster, ready
// workers, or a ready head.
func (c *RayCluster) IsActive() bool { return clusterActive(&c.cluster.Status) }

// PodsReady reports the cluster as ready.
func (c *RayCluster) PodsReady() bool { return c.cluster.Status.State == rayv1.Ready }

func clusterActive(st *rayv1.RayClusterStatus) bool {
	return st.State == rayv1.Ready || st.ReadyWorkerReplicas > 0 ||
		meta.IsStatusConditionTrue(st.Conditions, string(rayv1.HeadPodReady))
}
