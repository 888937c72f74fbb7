package crash

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// maxBacklog bounds the workloads created and not yet finished, so that a
// slow stretch does not pile up more than the queues can drain.
const maxBacklog = 48

// runner plays the users and the jobs: it creates workloads at a steady
// pace and finishes each some time after it is admitted. Both tolerate
// the API server being away: a failed call is retried.
type runner struct {
	ns    string
	total int
	// pace is the pause between two creations.
	pace   time.Duration
	reader client.Reader // the observer's cache
	paused atomic.Bool
	// allowed is how many workloads may be created so far: the test
	// raises it with each fault, so that the flow lasts as long as the
	// faults, however long they take.
	allowed atomic.Int64

	created, finished atomic.Int64
	// createErrors, finishErrors: calls that failed and were retried.
	createErrors, finishErrors atomic.Int64

	mu sync.Mutex
	// admittedAt: when the runner first saw each reservation, by
	// workload UID and reservation key.
	admittedAt map[string]time.Time
}

func (r *runner) create(ctx context.Context) {
	for i := 0; i < r.total && ctx.Err() == nil; {
		if r.paused.Load() || int64(i) >= r.allowed.Load() || r.created.Load()-r.finished.Load() >= maxBacklog {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		err := env.Client.Create(ctx, newWorkload(r.ns, i))
		if err != nil && !apierrors.IsAlreadyExists(err) {
			// Retried; AlreadyExists means an earlier try went through.
			r.createErrors.Add(1)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		i++
		r.created.Store(int64(i))
		time.Sleep(r.pace)
	}
}

// newWorkload is the i-th workload: a queue, a priority and a size that
// vary so that workloads preempt within their queue and reclaim quota
// lent in the cohort.
func newWorkload(ns string, i int) *kueue.Workload {
	cpu := []string{"1", "2", "3"}[(i/3)%3]
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workloadName(i)}, Spec: kueue.WorkloadSpec{
		QueueName: kueue.LocalQueueName(fmt.Sprintf("crash-cq-%d", i%crashQueues)),
		Priority:  ptr.To(int32((i % 3) * 50)),
		PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}},
	}}
}

func workloadName(i int) string { return fmt.Sprintf("w-%05d", i) }

// runtimeOf gives each workload a runtime of 200-1000ms: long enough that
// the queues fill up and higher priorities preempt.
func runtimeOf(name string) time.Duration {
	h := fnv.New32a()
	h.Write([]byte(name))
	return time.Duration(200+h.Sum32()%800) * time.Millisecond
}

// finish plays the jobs: an admitted workload runs for its runtime from
// when the runner first saw that reservation, then is marked Finished. An
// evicted workload stops running; Kuota clears its reservation itself, as
// it has no owner, and admits it again later.
func (r *runner) finish(ctx context.Context) {
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if r.paused.Load() {
			continue
		}
		var list kueue.WorkloadList
		// Read-only: the objects are the informer's own.
		if err := r.reader.List(ctx, &list, client.InNamespace(r.ns), client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		done := int64(0)
		for i := range list.Items {
			wl := &list.Items[i]
			switch {
			case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
				done++
			case r.due(wl):
				wl = wl.DeepCopy()
				meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished,
					Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedSucceeded, Message: "done"})
				// The update carries the informer's resourceVersion: if the
				// manager wrote since, it conflicts and the next pass retries.
				if err := env.Client.Status().Update(ctx, wl); err != nil {
					r.finishErrors.Add(1)
				}
			}
		}
		r.finished.Store(done)
	}
}

// due reports whether an admitted, running workload has run its time.
func (r *runner) due(wl *kueue.Workload) bool {
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) ||
		meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
		return false
	}
	res := reservationOf(wl)
	key := fmt.Sprintf("%s/%s/%d", wl.UID, res.key, res.evictions)
	r.mu.Lock()
	defer r.mu.Unlock()
	at, seen := r.admittedAt[key]
	if !seen {
		r.admittedAt[key] = time.Now()
		return false
	}
	return time.Since(at) >= runtimeOf(wl.Name)
}
