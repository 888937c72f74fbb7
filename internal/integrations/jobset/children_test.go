package jobset

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A child Job of a JobSet is not queued on its own while the JobSet
// integration is on, even with a queue name or manageJobsWithoutQueueName;
// a Job owned by something else is.
func TestChildJobsOfJobSetsAreNotQueuedOnTheirOwn(t *testing.T) {
	child := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "js-workers-0", Namespace: "ns",
		Labels: map[string]string{jobframework.QueueNameLabel: "lq"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: jobsetapi.GroupVersion.String(), Kind: "JobSet", Name: "js", UID: "u",
			Controller: ptr.To(true)}}}}
	on := jobframework.Options{ManageJobsWithoutQueueName: true, Enabled: []jobframework.Integration{Integration}}
	if managed, err := on.Managed(context.Background(), nil, child); err != nil || managed {
		t.Fatalf("a JobSet's child Job: managed %v (%v), want not managed", managed, err)
	}
	off := jobframework.Options{ManageJobsWithoutQueueName: true}
	if managed, _ := off.Managed(context.Background(), nil, child); !managed {
		t.Fatal("with the JobSet integration off, the Job is queued as any other")
	}
	child.OwnerReferences[0].APIVersion, child.OwnerReferences[0].Kind = "example.com/v1", "Pipeline"
	if managed, _ := on.Managed(context.Background(), nil, child); !managed {
		t.Fatal("a Job owned by a kind Kuota does not queue is queued itself")
	}
}
