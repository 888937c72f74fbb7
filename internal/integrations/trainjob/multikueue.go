package trainjob

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=get;update;patch

var _ jobframework.JobWithRemote = (*TrainJob)(nil)

// ManagedBy returns spec.managedBy (nil when unset or not a string).
func (t *TrainJob) ManagedBy() *string {
	v, err := stringAt(t.u.Object, managedByPath)
	if err != nil || v == "" {
		return nil
	}
	return &v
}

// SetManagedBy sets spec.managedBy; nil removes it.
func (t *TrainJob) SetManagedBy(v *string) {
	if v == nil {
		unstructured.RemoveNestedField(t.u.Object, managedByPath...)
		return
	}
	setAt(t.u, *v, managedByPath)
}

// RemoteCopy returns the TrainJob to create in a worker: suspended,
// without managedBy or status. The worker needs the training runtime it
// names.
func (t *TrainJob) RemoteCopy() client.Object {
	cp := jobframework.WorkerCopy(t.u).(*unstructured.Unstructured)
	unstructured.RemoveNestedField(cp.Object, managedByPath...)
	unstructured.RemoveNestedField(cp.Object, statusPath...)
	setAt(cp, true, suspendPath)
	return cp
}

// SyncStatus copies the worker TrainJob's status.
func (t *TrainJob) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	want, _, _ := unstructured.NestedFieldCopy(r.Object, statusPath...)
	have, _, _ := unstructured.NestedFieldNoCopy(t.u.Object, statusPath...)
	if equality.Semantic.DeepEqual(have, want) {
		return false
	}
	if want == nil {
		unstructured.RemoveNestedField(t.u.Object, statusPath...)
	} else {
		setAt(t.u, want, statusPath)
	}
	return true
}

// ClearStatus zeroes the child Jobs' active pods.
func (t *TrainJob) ClearStatus() bool {
	items, err := listAt(t.u.Object, jobsStatusPath)
	if err != nil {
		return false
	}
	changed := false
	for _, it := range items {
		if n, _, _ := int32At(it, jobStatusActivePath); n != 0 {
			setNested(it, int64(0), jobStatusActivePath)
			changed = true
		}
	}
	return changed
}
