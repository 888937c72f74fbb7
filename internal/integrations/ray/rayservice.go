package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// RayServiceGVK is the RayService kind.
var RayServiceGVK = rayv1.GroupVersion.WithKind("RayService")

// RayService wraps a RayService: a long-running Ray Serve deployment on a
// cluster of spec.rayClusterConfig, held by spec.rayClusterConfig.suspend
// (the operator passes it on to the RayCluster it creates). It never
// finishes.
type RayService struct{ svc *rayv1.RayService }

var _ jobframework.Job = (*RayService)(nil)

// NewRayService wraps obj, which must be a *rayv1.RayService (a new one
// when nil).
func NewRayService(obj client.Object) jobframework.Job {
	if obj == nil {
		return &RayService{svc: &rayv1.RayService{}}
	}
	return &RayService{svc: obj.(*rayv1.RayService)}
}

// Object returns the RayService.
func (s *RayService) Object() client.Object { return s.svc }

// IsSuspended reports spec.rayClusterConfig.suspend.
func (s *RayService) IsSuspended() bool { return ptr.Deref(s.svc.Spec.RayClusterSpec.Suspend, false) }

// Suspend sets spec.rayClusterConfig.suspend.
func (s *RayService) Suspend() { s.svc.Spec.RayClusterSpec.Suspend = ptr.To(true) }

// SuspendField is the field that holds a RayService (the job
// framework's JobWithSuspendField names it in its errors).
func (s *RayService) SuspendField() *field.Path {
	return field.NewPath("spec", "rayClusterConfig", "suspend")
}

// PodSets returns head and the worker groups of the cluster config.
func (s *RayService) PodSets() ([]kueue.PodSet, error) {
	return toPodSets(clusterTemplates(&s.svc.Spec.RayClusterSpec))
}

// RunWithPodSetsInfo puts the admission into the cluster config's pod
// templates and lifts its suspend.
func (s *RayService) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if err := applyAdmission(clusterTemplates(&s.svc.Spec.RayClusterSpec), infos); err != nil {
		return err
	}
	s.svc.Spec.RayClusterSpec.Suspend = ptr.To(false)
	return nil
}

// RestorePodSetsInfo puts the pod templates back.
func (s *RayService) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	return restore(clusterTemplates(&s.svc.Spec.RayClusterSpec), infos)
}

// Finished is never true: a RayService serves until it is deleted.
func (s *RayService) Finished() (string, bool, bool) { return "", false, false }

// IsActive reports a service the operator reports Ready.
func (s *RayService) IsActive() bool { return s.ready() }

// PodsReady reports a service the operator reports Ready.
func (s *RayService) PodsReady() bool { return s.ready() }

func (s *RayService) ready() bool {
	return meta.IsStatusConditionTrue(s.svc.Status.Conditions, string(rayv1.RayServiceReady))
}
