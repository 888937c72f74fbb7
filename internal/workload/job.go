package workload

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Kueue's label and annotations naming the job a Workload was created for.
// The annotations outlive the owner reference when the job is deleted with
// orphan propagation.
const (
	// JobUIDLabel, on a Workload, is the UID of its job.
	JobUIDLabel            = "kueue.x-k8s.io/job-uid"
	JobOwnerGVKAnnotation  = "kueue.x-k8s.io/job-owner-gvk"
	JobOwnerNameAnnotation = "kueue.x-k8s.io/job-owner-name"
)

// JobRef names the job a Workload belongs to.
type JobRef struct {
	GVK  schema.GroupVersionKind
	Name string
	UID  types.UID
	// Controller is true when it comes from the controller owner
	// reference; false when the Workload has no owner (its job was
	// deleted with orphan propagation) and it comes from the owner
	// annotations and the job-uid label.
	Controller bool
}

// JobOf returns the job a Workload belongs to: its controller owner or,
// when it has no owner at all, the one its annotations and label name.
func JobOf(wl *kueue.Workload) (JobRef, bool) {
	if ref := metav1.GetControllerOfNoCopy(wl); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || ref.Kind == "" || ref.Name == "" {
			return JobRef{}, false
		}
		return JobRef{GVK: gv.WithKind(ref.Kind), Name: ref.Name, UID: ref.UID, Controller: true}, true
	}
	if len(wl.OwnerReferences) > 0 {
		return JobRef{}, false
	}
	name, uid := wl.Annotations[JobOwnerNameAnnotation], wl.Labels[JobUIDLabel]
	gvString, kind, found := strings.Cut(wl.Annotations[JobOwnerGVKAnnotation], ", Kind=")
	if name == "" || uid == "" || !found || kind == "" {
		return JobRef{}, false
	}
	gv, err := schema.ParseGroupVersion(gvString)
	if err != nil {
		return JobRef{}, false
	}
	return JobRef{GVK: gv.WithKind(kind), Name: name, UID: types.UID(uid)}, true
}
