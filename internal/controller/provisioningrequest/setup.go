package provisioningrequest

import (
	"fmt"
	"sync/atomic"

	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Setup registers the check's controllers. The Active conditions are kept
// from the start; workloads are served once the API server serves
// ProvisioningRequests (cluster-autoscaler's CRD), checked again every
// few seconds until it does, and until then the checks say so.
func Setup(mgr ctrl.Manager, writer *apply.Writer) error {
	served := &atomic.Bool{}
	if err := (&CheckReconciler{Client: mgr.GetClient(), Served: served}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the provisioning admission check controller: %w", err)
	}
	gvk := autoscaling.SchemeGroupVersion.WithKind("ProvisioningRequest")
	log := ctrl.Log.WithName("provisioning").WithValues("kind", gvk.String())
	return jobframework.WhenServed(mgr, gvk, log, func() error {
		r := &WorkloadReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Writer: writer,
			Recorder: mgr.GetEventRecorderFor("kueue-provisioning-request-controller")}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the provisioning workload controller: %w", err)
		}
		served.Store(true)
		return nil
	})
}
