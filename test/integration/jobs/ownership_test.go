package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A Job naming another Job's admitted Workload with the
// prebuilt-workload-name label does not run on that Workload's quota: it
// is kept suspended, even when it is unsuspended by hand, with a warning
// naming the label and the Workload's owner; the Workload stays the other
// Job's.
func TestJobNamingAnotherJobsWorkloadStaysSuspended(t *testing.T) {
	startManager(t)
	ns, cq, fl := queues(t, "4")
	create(t, newJob(ns, "a", "lq", 2, "1"))
	a := waitRunning(t, ns, "a", fl)
	wlA := workloadOf(t, a)

	b := newJob(ns, "b", "lq", 2, "1")
	b.Labels[jobframework.PrebuiltWorkloadLabel] = wlA.Name
	create(t, b)

	// No webhook runs here: lift the suspension as a user whose request
	// slipped past it would.
	eventually(t, "Job b unsuspended by hand", func() error {
		j := getJob(t, ns, "b")
		j.Spec.Suspend = ptr.To(false)
		return env.Client.Update(context.Background(), j)
	})
	eventually(t, "Job b suspended again", func() error {
		if !ptr.Deref(getJob(t, ns, "b").Spec.Suspend, false) {
			return fmt.Errorf("Job b runs on Job a's Workload")
		}
		return nil
	})
	waitWarning(t, ns, "b", jobframework.PrebuiltWorkloadInUseReason, jobframework.PrebuiltWorkloadLabel, "Job a")
	wl := workloadOf(t, a)
	if len(wl.OwnerReferences) != 1 || wl.OwnerReferences[0].UID != a.UID {
		t.Fatalf("owner references %+v, want Job a's alone", wl.OwnerReferences)
	}
	waitReserved(t, cq, "2")
}

// A running Job deleted with orphan propagation leaves its Workload
// without owner; once the Job's pods are gone, the Workload is finished
// (OwnerNotFound) and its quota returns. A Workload a user created
// directly, also without owner, is left alone.
func TestOrphanedJobWorkloadIsFinished(t *testing.T) {
	startManager(t)
	ns, cq, fl := queues(t, "4")
	otherNS, otherCQ, _ := queues(t, "4")
	podSets, err := batchjob.New(newJob(otherNS, "x", "lq", 1, "1")).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	create(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "bare"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: podSets}})
	waitReserved(t, otherCQ, "1")

	create(t, newJob(ns, "gone", "lq", 2, "1"))
	j := waitRunning(t, ns, "gone", fl)
	wl := workloadOf(t, j)
	// The Job controller's pod, created by hand: there is none here.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone-0",
			Labels: map[string]string{batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: *j.Spec.Template.Spec.DeepCopy(),
	}
	create(t, pod)

	if err := env.Client.Delete(t.Context(), j, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	orphan(t, j, wl.DeepCopy(), pod.DeepCopy())
	afterCycles(t, func() error {
		if c := condition(workloadOf(t, j), kueue.WorkloadFinished); c != nil {
			return fmt.Errorf("finished while the Job's pod still runs: %+v", c)
		}
		return nil
	})

	eventually(t, "the pod succeeds", func() error {
		var p corev1.Pod
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(pod), &p); err != nil {
			return err
		}
		p.Status.Phase = corev1.PodSucceeded
		return env.Client.Status().Update(t.Context(), &p)
	})
	eventually(t, "the ownerless Workload is finished", func() error {
		c := condition(workloadOf(t, j), kueue.WorkloadFinished)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadFinishedOwnerNotFound {
			return fmt.Errorf("Finished %+v, want True with reason %s", c, kueue.WorkloadFinishedOwnerNotFound)
		}
		return nil
	})
	waitReserved(t, cq, "0")
	afterCycles(t, func() error {
		var bare kueue.Workload
		if err := env.Client.Get(t.Context(), objectKey(otherNS, "bare"), &bare); err != nil {
			return err
		}
		if c := condition(&bare, kueue.WorkloadFinished); c != nil || bare.Status.Admission == nil {
			return fmt.Errorf("the bare Workload must stay admitted and unfinished: Finished %+v", c)
		}
		return nil
	})
	waitReserved(t, otherCQ, "1")
}

// orphan does what the garbage collector does (none runs here) for a Job
// deleted with orphan propagation: its dependents lose their owner
// reference to it, then its orphan finalizer goes.
func orphan(t *testing.T, j *batchv1.Job, dependents ...client.Object) {
	t.Helper()
	for _, obj := range dependents {
		eventually(t, "owner reference removed from "+obj.GetName(), func() error {
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			obj.SetOwnerReferences(nil)
			return env.Client.Update(t.Context(), obj)
		})
	}
	eventually(t, "the orphan finalizer removed from Job "+j.Name, func() error {
		var cur batchv1.Job
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(j), &cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == metav1.FinalizerOrphanDependents })
		return env.Client.Update(t.Context(), &cur)
	})
}

// waitWarning waits for a warning event about an object with the reason
// whose message contains every one of parts.
func waitWarning(t *testing.T, ns, name, reason string, parts ...string) {
	t.Helper()
	eventually(t, "warning "+reason+" on "+name, func() error {
		var list corev1.EventList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.InvolvedObject.Name != name {
				continue
			}
			if e.Type == corev1.EventTypeWarning && e.Reason == reason &&
				!slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(e.Message, p) }) {
				return nil
			}
			seen = append(seen, e.Type+"/"+e.Reason+": "+e.Message)
		}
		return fmt.Errorf("events seen: %v", seen)
	})
}
