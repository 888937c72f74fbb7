package jobframework

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WorkerCopy returns a deep copy of a job with only the metadata its
// author gave (name, namespace, labels, annotations): what the manager's
// API server and controllers set (UID, resourceVersion, owners,
// finalizers, timestamps) is dropped. The kind then clears its status and
// managedBy and suspends the copy.
func WorkerCopy(obj client.Object) client.Object {
	cp := obj.DeepCopyObject().(client.Object)
	cp.SetUID("")
	cp.SetResourceVersion("")
	cp.SetGeneration(0)
	cp.SetCreationTimestamp(metav1.Time{})
	cp.SetDeletionTimestamp(nil)
	cp.SetDeletionGracePeriodSeconds(nil)
	cp.SetManagedFields(nil)
	cp.SetOwnerReferences(nil)
	cp.SetFinalizers(nil)
	cp.SetGenerateName("")
	return cp
}
