package jobframework

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControlledByQueuedKind reports whether obj's controller owner is of a
// kind an enabled integration queues (a JobSet's child Jobs, for
// instance) or of an external framework's kind. Such an object is not
// queued on its own, nor sent to the default LocalQueue: its parent's
// Workload already holds its quota.
func (o Options) ControlledByQueuedKind(obj client.Object) bool {
	owner := metav1.GetControllerOf(obj)
	if owner == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return false
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: owner.Kind}
	_, ok := o.EnabledKind(gk)
	return ok || o.IsExternal(gk)
}

// IsExternal reports whether gk is an external framework's kind.
func (o Options) IsExternal(gk schema.GroupKind) bool {
	return slices.Contains(o.External, gk)
}
