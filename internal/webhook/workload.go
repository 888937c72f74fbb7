package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/validation"
)

// The Workload webhook also sees status writes (workloads/status), since
// the admission rules are about the status.
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-workload,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=workloads;workloads/status,verbs=create;update,versions=v1beta2,name=vworkload.kb.io,admissionReviewVersions=v1

var _ admission.Validator[*kueue.Workload] = workloadValidator

// workloadValidator checks Workloads, spec and status. There is no
// Workload defaulting webhook: the only defaulting Kueue does there (drop
// minCount when partial admission is off) does not apply, as Kuota always
// supports partial admission.
var workloadValidator = validator[*kueue.Workload]{
	kind:   "Workload",
	create: validation.ValidateWorkload,
	update: validation.ValidateWorkloadUpdate,
}

func setupWorkload(mgr ctrl.Manager) error {
	return wrap("Workload", ctrl.NewWebhookManagedBy(mgr, &kueue.Workload{}).
		WithValidator(workloadValidator).
		Complete())
}
