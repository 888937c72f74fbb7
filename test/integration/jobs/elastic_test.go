package jobs

import (
	"context"
	"fmt"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// An elastic Job changes its parallelism while it runs without being
// stopped: fewer pods lower its Workload and give the quota back at once;
// more pods are admitted as a new Workload slice that replaces the running
// one (which finishes as WorkloadSliceReplaced), and the added pods are held
// by the elastic gate until then; a slice that cannot fit waits while the
// job keeps running, and goes when the job shrinks back.
func TestElasticJobScalesWhileRunning(t *testing.T) {
	startManager(t)
	ns, cq, fl := queues(t, "4")
	j := elasticJob(ns, "elastic", 2)
	create(t, j)
	j = waitRunning(t, ns, "elastic", fl)
	first := workloadOf(t, j)
	if first.Annotations[kueue.ElasticJobAnnotation] != "true" {
		t.Fatalf("the Workload's annotations %v lack the elastic opt-in", first.Annotations)
	}

	// The Job controller's pods, made by hand (there is none here): held
	// by the gate until the reconciler lets them go.
	startPods(t, j, 0, 2)
	waitFreePods(t, j, 2, 0)
	waitReserved(t, cq, "2")

	scale(t, ns, "elastic", 1)
	eventually(t, "the running Workload lowered to 1 pod", func() error {
		wl := workloadOf(t, j)
		psa := wl.Status.Admission.PodSetAssignments[0]
		if wl.Spec.PodSets[0].Count != 1 || ptr.Deref(psa.Count, 0) != 1 || psa.ResourceUsage.Cpu().String() != "1" {
			return fmt.Errorf("count %d, admitted %d with %s cpu", wl.Spec.PodSets[0].Count, ptr.Deref(psa.Count, 0), psa.ResourceUsage.Cpu())
		}
		return nil
	})
	waitReserved(t, cq, "1")
	deletePod(t, ns, "elastic-1") // the Job controller removes the extra pod

	scale(t, ns, "elastic", 3)
	next := waitSlice(t, j, first, func(wl *kueue.Workload) error {
		if c := condition(wl, kueue.WorkloadAdmitted); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not admitted: %+v", c)
		}
		if n := ptr.Deref(wl.Status.Admission.PodSetAssignments[0].Count, 0); n != 3 {
			return fmt.Errorf("admitted with %d pods, want 3", n)
		}
		return nil
	})
	eventually(t, "the first slice finished as replaced", func() error {
		if c := condition(workloadOf(t, j), kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadSliceReplaced {
			return fmt.Errorf("Finished %+v", c)
		}
		return nil
	})
	waitReserved(t, cq, "3")
	if ptr.Deref(getJob(t, ns, "elastic").Spec.Suspend, false) {
		t.Fatal("the Job was suspended while it grew")
	}
	startPods(t, j, 2, 4)
	waitFreePods(t, j, 3, 0)

	// 6 pods never fit in 4 cpus: the slice waits, the Job runs on with 3
	// pods, and the 3 added pods stay held.
	scale(t, ns, "elastic", 6)
	third := waitSlice(t, j, next, func(wl *kueue.Workload) error {
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		// The slice's request is its whole size, though it waits for the
		// 3 pods it adds.
		if rr := wl.Status.ResourceRequests; len(rr) != 1 || rr[0].Resources.Cpu().String() != "6" {
			return fmt.Errorf("resourceRequests %+v", rr)
		}
		return nil
	})
	startPods(t, j, 4, 7)
	afterCycles(t, func() error {
		if err := freePods(t, j, 3, 3); err != nil {
			return err
		}
		if ptr.Deref(getJob(t, ns, "elastic").Spec.Suspend, false) {
			return fmt.Errorf("the Job was suspended")
		}
		return nil
	})
	waitReserved(t, cq, "3")

	// Back to 3: the waiting slice is not needed any more.
	scale(t, ns, "elastic", 3)
	eventually(t, "the waiting slice deleted", func() error {
		var wl kueue.Workload
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(third), &wl)
		if err == nil {
			return fmt.Errorf("slice %s still there", third.Name)
		}
		return client.IgnoreNotFound(err)
	})
	complete(t, ns, "elastic")
	eventually(t, "the running slice finished", func() error {
		var wl kueue.Workload
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(next), &wl); err != nil {
			return err
		}
		if c := condition(&wl, kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadFinishedSucceeded {
			return fmt.Errorf("Finished %+v", c)
		}
		return nil
	})
	waitReserved(t, cq, "0")
}

// elasticJob is an elastic Job of pods of 1 cpu, 20 completions, with the
// gate the webhook adds to its template.
func elasticJob(ns, name string, parallelism int32) *batchv1.Job {
	j := newJob(ns, name, "lq", parallelism, "1")
	j.Annotations = map[string]string{kueue.ElasticJobAnnotation: "true"}
	j.Spec.Completions = ptr.To[int32](20)
	j.Spec.Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: kueue.ElasticJobSchedulingGate}}
	return j
}

// scale sets a Job's parallelism.
func scale(t *testing.T, ns, name string, n int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("parallelism set to %d", n), func() error {
		j := getJob(t, ns, name)
		j.Spec.Parallelism = ptr.To(n)
		return env.Client.Update(context.Background(), j)
	})
}

// startPods creates the Job's pods from..to-1 as its controller would (from
// the template, gate included) and changes its status's active count, as
// the controller does.
func startPods(t *testing.T, j *batchv1.Job, from, to int) {
	t.Helper()
	cur := getJob(t, j.Namespace, j.Name)
	for i := from; i < to; i++ {
		create(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: fmt.Sprintf("%s-%d", j.Name, i),
				Labels: map[string]string{batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *cur.Spec.Template.Spec.DeepCopy(),
		})
	}
	setJobStatus(t, j.Namespace, j.Name, func(st *batchv1.JobStatus) {
		if st.StartTime == nil {
			st.StartTime = ptr.To(metav1.Now())
		}
		st.Active = int32(to) // pods from 0, less those deleted before
	})
}

func deletePod(t *testing.T, ns, name string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Delete(context.Background(), p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// freePods checks how many of the Job's pods run free of the elastic gate
// and how many are held.
func freePods(t *testing.T, j *batchv1.Job, free, held int) error {
	t.Helper()
	var list corev1.PodList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(j.Namespace),
		client.MatchingLabels{batchv1.ControllerUidLabel: string(j.UID)}); err != nil {
		return err
	}
	gotFree, gotHeld := 0, 0
	for _, p := range list.Items {
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		if slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.ElasticJobSchedulingGate }) {
			gotHeld++
		} else {
			gotFree++
		}
	}
	if gotFree != free || gotHeld != held {
		return fmt.Errorf("%d pods free and %d held, want %d and %d", gotFree, gotHeld, free, held)
	}
	return nil
}

func waitFreePods(t *testing.T, j *batchv1.Job, free, held int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d pods free, %d held", free, held), func() error { return freePods(t, j, free, held) })
}

// waitSlice waits for the Workload slice that replaces prev to pass check.
func waitSlice(t *testing.T, j *batchv1.Job, prev *kueue.Workload, check func(*kueue.Workload) error) *kueue.Workload {
	t.Helper()
	var found *kueue.Workload
	eventually(t, "a slice replacing "+prev.Name, func() error {
		var list kueue.WorkloadList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(j.Namespace),
			client.MatchingLabels{jobframework.JobUIDLabel: string(j.UID)}); err != nil {
			return err
		}
		for i := range list.Items {
			wl := &list.Items[i]
			if wl.Annotations[kueue.WorkloadSliceReplacementForAnnotation] == prev.Namespace+"/"+prev.Name {
				found = wl
				return check(wl)
			}
		}
		return fmt.Errorf("no slice replaces %s", prev.Name)
	})
	return found
}

// waitReserved waits until the ClusterQueue's status shows cpu reserved.
func waitReserved(t *testing.T, cq, cpu string) {
	t.Helper()
	eventually(t, "ClusterQueue "+cq+" reserves "+cpu+" cpu", func() error {
		var q kueue.ClusterQueue
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: cq}, &q); err != nil {
			return err
		}
		for _, f := range q.Status.FlavorsReservation {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU {
					if r.Total.String() != cpu {
						return fmt.Errorf("%s cpu reserved", r.Total.String())
					}
					return nil
				}
			}
		}
		if cpu == "0" {
			return nil
		}
		return fmt.Errorf("no cpu reservation in %+v", q.Status.FlavorsReservation)
	})
}

// An elastic Job preempted while its growing slice waits is stopped as a
// whole: its running slice is evicted and, once its pods are gone, finished
// as out of sync; the waiting slice, of the new size, is queued on its own
// and runs the Job once the preemptor is done. No quota is left held.
func TestElasticJobPreemptedWhileGrowing(t *testing.T) {
	startManager(t)
	ns, cq, fl := queues(t, "4")
	create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 100})
	j := elasticJob(ns, "elastic", 2)
	create(t, j)
	j = waitRunning(t, ns, "elastic", fl)
	first := workloadOf(t, j)
	startPods(t, j, 0, 2)
	waitFreePods(t, j, 2, 0)

	scale(t, ns, "elastic", 6) // 6 pods never fit beside the preemptor's
	next := waitSlice(t, j, first, func(wl *kueue.Workload) error {
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	high := newJob(ns, "high", "lq", 4, "1")
	high.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	create(t, high)
	eventually(t, "the elastic Job is suspended", func() error {
		if !ptr.Deref(getJob(t, ns, "elastic").Spec.Suspend, false) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	for i := range 2 {
		deletePod(t, ns, fmt.Sprintf("elastic-%d", i))
	}
	setJobStatus(t, ns, "elastic", func(st *batchv1.JobStatus) { st.Active, st.StartTime = 0, nil })
	waitRunning(t, ns, "high", fl)
	eventually(t, "the first slice finished as out of sync", func() error {
		if c := condition(workloadOf(t, j), kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadFinishedOutOfSync {
			return fmt.Errorf("Finished %+v", c)
		}
		return nil
	})
	waitReserved(t, cq, "4")
	complete(t, ns, "high")
	// The 6-pod slice, now the Job's only one, waits for its whole size:
	// 6 cpus never fit in 4.
	afterCycles(t, func() error {
		var wl kueue.Workload
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(next), &wl); err != nil {
			return err
		}
		if wl.Status.Admission != nil || !ptr.Deref(getJob(t, ns, "elastic").Spec.Suspend, false) {
			return fmt.Errorf("admission %+v", wl.Status.Admission)
		}
		return nil
	})
	scale(t, ns, "elastic", 3)
	waitRunning(t, ns, "elastic", fl)
	eventually(t, "the slice admitted with 3 pods", func() error {
		var wl kueue.Workload
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(next), &wl); err != nil {
			return err
		}
		if wl.Status.Admission == nil || ptr.Deref(wl.Status.Admission.PodSetAssignments[0].Count, 0) != 3 {
			return fmt.Errorf("admission %+v", wl.Status.Admission)
		}
		return nil
	})
	waitReserved(t, cq, "3")
}
