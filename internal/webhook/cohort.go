package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/validation"
)

// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-cohort,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=cohorts,verbs=create;update,versions=v1beta2,name=vcohort.kb.io,admissionReviewVersions=v1

var _ admission.Validator[*kueue.Cohort] = cohortValidator

// cohortValidator checks Cohorts (spec only).
var cohortValidator = validator[*kueue.Cohort]{
	kind:   "Cohort",
	create: validation.ValidateCohort,
	update: validation.ValidateCohortUpdate,
}

func setupCohort(mgr ctrl.Manager) error {
	return wrap("Cohort", ctrl.NewWebhookManagedBy(mgr, &kueue.Cohort{}).
		WithValidator(cohortValidator).
		Complete())
}
