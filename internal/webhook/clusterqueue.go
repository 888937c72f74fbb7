package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/validation"
)

// +kubebuilder:webhook:path=/mutate-kueue-x-k8s-io-v1beta2-clusterqueue,mutating=true,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=clusterqueues,verbs=create,versions=v1beta2,name=mclusterqueue.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-clusterqueue,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=clusterqueues,verbs=create;update,versions=v1beta2,name=vclusterqueue.kb.io,admissionReviewVersions=v1

var _ admission.Validator[*kueue.ClusterQueue] = clusterQueueValidator

// clusterQueueValidator checks ClusterQueues (spec only: their status is
// Kuota's and is not sent to the webhook).
var clusterQueueValidator = validator[*kueue.ClusterQueue]{
	kind:   "ClusterQueue",
	create: validation.ValidateClusterQueue,
	update: validation.ValidateClusterQueueUpdate,
}

func setupClusterQueue(mgr ctrl.Manager) error {
	return wrap("ClusterQueue", ctrl.NewWebhookManagedBy(mgr, &kueue.ClusterQueue{}).
		WithDefaulter(finalizerDefaulter[*kueue.ClusterQueue]{}).
		WithValidator(clusterQueueValidator).
		Complete())
}
