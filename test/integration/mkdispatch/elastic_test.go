package mkdispatch

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/multikueue"
)

// An elastic Job that MultiKueue runs in a worker is started there, and
// its pods, held by the elastic gate of its template, are let go by the
// worker's Kuota up to the admitted count (the copy names its prebuilt
// Workload, so it runs as a plain Job there).
func TestElasticJobRunsInAWorker(t *testing.T) {
	ns := setup(t)
	startManager(t, manager)
	waitCheck(t, ns, multikueue.ReasonSomeActiveClusters)
	job := newJob(ns, "elastic", 2, "1")
	job.Annotations = map[string]string{kueue.ElasticJobAnnotation: "true"}
	job.Spec.Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: kueue.ElasticJobSchedulingGate}}
	create(t, manager, job)
	startManager(t, worker1)
	var remote batchv1.Job
	eventually(t, "the job runs in worker1", func() error {
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(job), &remote); err != nil {
			return err
		}
		if ptr.Deref(remote.Spec.Suspend, true) {
			return fmt.Errorf("suspended")
		}
		return nil
	})
	for i := range 3 {
		create(t, worker1, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("elastic-%d", i),
				Labels: map[string]string{batchv1.ControllerUidLabel: string(remote.UID), batchv1.JobNameLabel: remote.Name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: remote.Name, UID: remote.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *remote.Spec.Template.Spec.DeepCopy(),
		})
	}
	setRemoteStatus(t, client.ObjectKeyFromObject(job), func(st *batchv1.JobStatus) {
		st.StartTime, st.Active = ptr.To(metav1.Now()), 3
	})
	eventually(t, "2 of the 3 pods let go in worker1 (the admitted count)", func() error {
		var list corev1.PodList
		if err := worker1.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		free := 0
		for _, p := range list.Items {
			if len(p.Spec.SchedulingGates) == 0 {
				free++
			}
		}
		if free != 2 {
			return fmt.Errorf("%d of %d pods free", free, len(list.Items))
		}
		return nil
	})
}
