package rayjobs

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// rayJob is a RayJob of a head and n workers of 1 cpu each, submitted
// from a Kubernetes Job: with a submitter template of 500m when
// submitter is true, else the operator's default one (also 500m).
func rayJob(s *suite, name string, n int32, submitter bool, labels ...string) *rayv1.RayJob {
	spec := clusterSpec(n)
	spec.Suspend = nil // a RayJob is held by its own spec.suspend
	j := &rayv1.RayJob{ObjectMeta: s.objectMeta(name, labels...), Spec: rayv1.RayJobSpec{
		Entrypoint: "python -c 'print(1)'", RayClusterSpec: &spec, ShutdownAfterJobFinishes: true,
		SubmissionMode: rayv1.K8sJobMode, Suspend: true, // as the webhook would
	}}
	if submitter {
		t := podTemplate("500m")
		j.Spec.SubmitterPodTemplate = &t
	}
	return j
}

// A RayJob is a Workload with PodSets head, workers and submitter, with
// the maximum execution time of its label; it runs on its flavor once
// admitted (head, worker and submitter templates). A higher-priority
// RayJob (WorkloadPriorityClass label) preempts it: it is suspended, its
// templates are restored once the operator has torn its cluster down
// (jobDeploymentStatus Suspended), and it waits, queued, while quota is
// short; when the preemptor's job succeeds, it is admitted again, runs,
// succeeds, and the quota returns.
func TestRayJobPreemptedRequeuedAndFinished(t *testing.T) {
	s := setUp(t, "4")
	s.create(&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-high"}, Value: 100})
	low := rayJob(s, "low", 1, true, jobframework.MaxExecTimeSecondsLabel, "3600")
	s.create(low)
	wl := s.waitWorkload(low)
	if got := podSetNames(wl); !slices.Equal(got, []string{"head=1", "workers=1", "submitter=1"}) {
		t.Fatalf("podsets %v, want head=1 workers=1 submitter=1", got)
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
		t.Fatalf("maximumExecutionTimeSeconds %v, want 3600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	s.waitRunning(low)
	s.jobStatus(low, rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, rayv1.Ready)

	high := rayJob(s, "high", 1, false, jobframework.PriorityClassLabel, s.ns+"-high")
	s.create(high)
	hwl := s.waitWorkload(high)
	if ptr.Deref(hwl.Spec.Priority, 0) != 100 || hwl.Spec.PriorityClassRef == nil || hwl.Spec.PriorityClassRef.Name != s.ns+"-high" {
		t.Fatalf("priority %v ref %+v, want 100 from %s-high", hwl.Spec.Priority, hwl.Spec.PriorityClassRef, s.ns)
	}
	s.eventually("the low-priority RayJob is suspended", func() error {
		if err := s.get(low); err != nil {
			return err
		}
		if !low.Spec.Suspend {
			return fmt.Errorf("still running")
		}
		return nil
	})
	if err := s.get(low); err != nil || low.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.NodeSelector["pool"] != s.fl {
		t.Fatalf("the victim's templates were restored while its cluster still runs (%v)", err)
	}
	s.jobStatus(low, rayv1.JobDeploymentStatusSuspended, rayv1.JobStatusNew, "")
	s.waitRestored(low)
	s.waitRunning(high)
	s.eventually("the victim is requeued", func() error {
		wl := s.workload(low)
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionTrue || wl.Status.Admission != nil {
			return fmt.Errorf("Requeued %+v admission %v", c, wl.Status.Admission)
		}
		return nil
	})
	s.staysQueued(low)

	s.jobStatus(high, rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, rayv1.Ready)
	s.jobStatus(high, rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, rayv1.Ready)
	s.waitFinished(high, kueue.WorkloadFinishedSucceeded)
	s.waitRunning(low)
	s.jobStatus(low, rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, rayv1.Ready)
	s.jobStatus(low, rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, rayv1.Ready)
	s.waitFinished(low, kueue.WorkloadFinishedSucceeded)
	s.waitQuotaFree()
}

// The RayCluster the operator creates for an admitted RayJob carries the
// RayJob's labels, the queue name among them, but its quota is the
// RayJob's: Kuota neither suspends it nor gives it a Workload. A RayJob
// whose deployment fails finishes its Workload as Failed.
func TestRayJobClusterIsNotQueuedAndFailureFinishes(t *testing.T) {
	s := setUp(t, "10")
	j := rayJob(s, "job", 2, false)
	s.create(j)
	s.waitRunning(j)
	wl := s.waitWorkload(j)
	if got := podSetNames(wl); !slices.Equal(got, []string{"head=1", "workers=2", "submitter=1"}) {
		t.Fatalf("podsets %v, want head=1 workers=2 submitter=1", got)
	}
	rc := &rayv1.RayCluster{ObjectMeta: s.objectMeta(j.Name + "-raycluster"), Spec: *j.Spec.RayClusterSpec.DeepCopy()}
	rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: rayv1.GroupVersion.String(), Kind: "RayJob", Name: j.Name, UID: j.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	s.create(rc)
	if err := s.m.WaitCycles(3, 10*time.Second, func() error {
		if err := s.get(rc); err != nil {
			return err
		}
		if rc.Spec.Suspend != nil {
			return fmt.Errorf("the RayJob's cluster was suspended")
		}
		if s.workload(rc) != nil {
			return fmt.Errorf("the RayJob's cluster has a Workload of its own")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.jobStatus(j, rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning, rayv1.Ready)
	s.jobStatus(j, rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed, rayv1.Ready)
	s.waitFinished(j, kueue.WorkloadFinishedFailed)
	s.waitQuotaFree()
}

// A RayCluster is a Workload with PodSets head and workers. A second one
// waits, suspended and without quota, while the first holds it (a
// RayCluster never finishes); when the first is deleted, the second is
// admitted and runs on the flavor.
func TestRayClusterQueuedWhileQuotaIsShortThenAdmitted(t *testing.T) {
	s := setUp(t, "3")
	first := &rayv1.RayCluster{ObjectMeta: s.objectMeta("first"), Spec: clusterSpec(2)}
	second := &rayv1.RayCluster{ObjectMeta: s.objectMeta("second"), Spec: clusterSpec(2)}
	s.create(first)
	wl := s.waitWorkload(first)
	if got := podSetNames(wl); !slices.Equal(got, []string{"head=1", "workers=2"}) {
		t.Fatalf("podsets %v, want head=1 workers=2", got)
	}
	s.waitRunning(first)
	s.clusterState(first, rayv1.Ready, 2)
	s.create(second)
	s.waitWorkload(second)
	s.staysQueued(second)

	if err := s.c.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	s.waitRunning(second)
}

// A RayService is a Workload with PodSets head and workers of its
// rayClusterConfig, and runs once admitted (rayClusterConfig.suspend
// false, templates on the flavor). A higher-priority RayCluster preempts
// it: it is suspended with its templates restored, and is admitted again
// once the RayCluster is gone.
func TestRayServicePreemptedByRayCluster(t *testing.T) {
	s := setUp(t, "3")
	s.create(&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-high"}, Value: 100})
	svc := &rayv1.RayService{ObjectMeta: s.objectMeta("svc"), Spec: rayv1.RayServiceSpec{RayClusterSpec: clusterSpec(1)}}
	s.create(svc)
	wl := s.waitWorkload(svc)
	if got := podSetNames(wl); !slices.Equal(got, []string{"head=1", "workers=1"}) {
		t.Fatalf("podsets %v, want head=1 workers=1", got)
	}
	s.waitRunning(svc)

	rc := &rayv1.RayCluster{ObjectMeta: s.objectMeta("urgent", jobframework.PriorityClassLabel, s.ns+"-high"), Spec: clusterSpec(1)}
	s.create(rc)
	s.waitRestored(svc)
	s.waitRunning(rc)
	s.staysQueued(svc)

	if err := s.c.Delete(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	s.waitRunning(svc)
}

// A RayJob naming a prebuilt Workload gets no Workload of its own; it
// adopts the prebuilt one once it exists, runs when it is admitted, and
// finishes it.
func TestRayJobUsesItsPrebuiltWorkload(t *testing.T) {
	s := setUp(t, "4")
	job := rayJob(s, "pre", 1, true, jobframework.PrebuiltWorkloadLabel, "ready-made")
	s.create(job)
	if err := s.m.WaitCycles(3, 10*time.Second, func() error {
		if s.workload(job) != nil {
			return fmt.Errorf("a RayJob with a prebuilt Workload name must not get a Workload of its own")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	podSets, err := integrationOf(job).NewJob(job).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	s.create(&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "ready-made"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: podSets}})
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: s.ns, Name: "ready-made"}
	s.waitRunning(job)
	if err := s.c.Get(t.Context(), key, &wl); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&wl, job) {
		t.Fatalf("the prebuilt Workload is not owned by its RayJob: %+v", wl.OwnerReferences)
	}
	s.jobStatus(job, rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, rayv1.Ready)
	s.eventually("the prebuilt Workload finished", func() error {
		if err := s.c.Get(t.Context(), key, &wl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("conditions %+v", wl.Status.Conditions)
		}
		return nil
	})
	s.waitQuotaFree()
}
