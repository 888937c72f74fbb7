package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/validation"
)

// +kubebuilder:webhook:path=/mutate-kueue-x-k8s-io-v1beta2-resourceflavor,mutating=true,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=resourceflavors,verbs=create,versions=v1beta2,name=mresourceflavor.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-resourceflavor,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=resourceflavors,verbs=create;update,versions=v1beta2,name=vresourceflavor.kb.io,admissionReviewVersions=v1

var _ admission.Validator[*kueue.ResourceFlavor] = resourceFlavorValidator

// resourceFlavorValidator checks ResourceFlavors.
var resourceFlavorValidator = validator[*kueue.ResourceFlavor]{
	kind:   "ResourceFlavor",
	create: validation.ValidateResourceFlavor,
	update: validation.ValidateResourceFlavorUpdate,
}

func setupResourceFlavor(mgr ctrl.Manager) error {
	return wrap("ResourceFlavor", ctrl.NewWebhookManagedBy(mgr, &kueue.ResourceFlavor{}).
		WithDefaulter(finalizerDefaulter[*kueue.ResourceFlavor]{}).
		WithValidator(resourceFlavorValidator).
		Complete())
}
