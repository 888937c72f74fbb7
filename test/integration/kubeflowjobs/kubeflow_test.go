package kubeflowjobs

import (
	"fmt"
	"slices"
	"testing"
	"time"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func pytorchJob(s *suite, name string, labels ...string) *kftraining.PyTorchJob {
	return &kftraining.PyTorchJob{ObjectMeta: s.objectMeta(name, labels...), Spec: kftraining.PyTorchJobSpec{
		RunPolicy: kftraining.RunPolicy{Suspend: ptr.To(true)},
		PyTorchReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
			kftraining.PyTorchJobReplicaTypeMaster: v1Replica(1), kftraining.PyTorchJobReplicaTypeWorker: v1Replica(1)},
	}}
}

// A PyTorchJob is a Workload with PodSets master and worker, with the
// maximum execution time of its label; it runs on its flavor once
// admitted. A higher-priority PyTorchJob (WorkloadPriorityClass label)
// preempts it: it is suspended, its templates are restored once the
// operator has removed its pods, and it waits, queued, while quota is
// short; when the preemptor succeeds, it is admitted again, runs, succeeds,
// and the quota returns.
func TestPyTorchJobPreemptedRequeuedAndFinished(t *testing.T) {
	s := setUp(t, "3")
	s.create(&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-high"}, Value: 100})
	low := pytorchJob(s, "low", jobframework.MaxExecTimeSecondsLabel, "3600")
	s.create(low)
	wl := s.waitWorkload(low)
	if got := podSetNames(wl); !slices.Equal(got, []string{"master=1", "worker=1"}) {
		t.Fatalf("podsets %v, want master=1 worker=1", got)
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
		t.Fatalf("maximumExecutionTimeSeconds %v, want 3600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	s.waitRunning(low)
	s.operator(low, running)

	high := pytorchJob(s, "high", jobframework.PriorityClassLabel, s.ns+"-high")
	s.create(high)
	hwl := s.waitWorkload(high)
	if ptr.Deref(hwl.Spec.Priority, 0) != 100 || hwl.Spec.PriorityClassRef == nil || hwl.Spec.PriorityClassRef.Name != s.ns+"-high" {
		t.Fatalf("priority %v ref %+v, want 100 from %s-high", hwl.Spec.Priority, hwl.Spec.PriorityClassRef, s.ns)
	}
	s.eventually("the low-priority PyTorchJob is suspended", func() error {
		if err := s.get(low); err != nil {
			return err
		}
		if !ptr.Deref(low.Spec.RunPolicy.Suspend, false) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	if err := s.get(high); err != nil || !ptr.Deref(high.Spec.RunPolicy.Suspend, false) {
		t.Fatalf("the preemptor started while the victim's pods still run (%v)", err)
	}
	s.operator(low, suspended)
	s.eventually("the victim's templates are restored", func() error {
		if err := s.get(low); err != nil {
			return err
		}
		for typ, r := range low.Spec.PyTorchReplicaSpecs {
			if len(r.Template.Spec.NodeSelector) != 0 || len(r.Template.Spec.Tolerations) != 0 || len(r.Template.Labels) != 0 {
				return fmt.Errorf("%s template not restored: %+v", typ, r.Template)
			}
		}
		return nil
	})
	s.waitRunning(high)
	s.eventually("the victim is requeued", func() error {
		wl := s.workload(low)
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionTrue || wl.Status.Admission != nil {
			return fmt.Errorf("Requeued %+v admission %v", c, wl.Status.Admission)
		}
		return nil
	})
	s.staysQueued(low)

	s.operator(high, running)
	s.operator(high, succeeded)
	s.waitFinished(high)
	s.waitRunning(low)
	s.operator(low, running)
	s.operator(low, succeeded)
	s.waitFinished(low)
	s.waitQuotaFree()
}

func mpiJob(s *suite, name string, workers int32) *mpi.MPIJob {
	return &mpi.MPIJob{ObjectMeta: s.objectMeta(name), Spec: mpi.MPIJobSpec{
		RunPolicy: mpi.RunPolicy{Suspend: ptr.To(true)},
		MPIReplicaSpecs: map[mpi.MPIReplicaType]*mpi.ReplicaSpec{
			mpi.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: podTemplate("1")},
			mpi.MPIReplicaTypeWorker:   {Replicas: ptr.To(workers), Template: podTemplate("1")},
		},
	}}
}

// An MPIJob is a Workload with PodSets launcher and worker. A second one
// waits, suspended and without quota, while the first holds it; when the
// first succeeds, the second is admitted, runs on the flavor, succeeds,
// and the quota returns.
func TestMPIJobQueuedWhileQuotaIsShortThenAdmitted(t *testing.T) {
	s := setUp(t, "3")
	first, second := mpiJob(s, "first", 2), mpiJob(s, "second", 2)
	s.create(first)
	wl := s.waitWorkload(first)
	if got := podSetNames(wl); !slices.Equal(got, []string{"launcher=1", "worker=2"}) {
		t.Fatalf("podsets %v, want launcher=1 worker=2", got)
	}
	s.waitRunning(first)
	s.operator(first, running)
	s.create(second)
	s.waitWorkload(second)
	s.staysQueued(second)

	s.operator(first, succeeded)
	s.waitFinished(first)
	s.waitRunning(second)
	s.operator(second, running)
	s.operator(second, succeeded)
	s.waitFinished(second)
	s.waitQuotaFree()
}

// Each other Kubeflow v1 kind is a Workload with one PodSet per replica
// type, in Kueue's order; it runs on its flavor with every replica type's
// template changed, and finishes when the operator reports Succeeded. The
// TFJob takes its priority from its pods' PriorityClass.
func TestEachV1KindRunsWithItsPodSets(t *testing.T) {
	s := setUp(t, "20")
	s.create(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-pods"}, Value: 42})
	tfTemplate := func(n int32) *kftraining.ReplicaSpec {
		r := v1Replica(n)
		r.Template.Spec.PriorityClassName = s.ns + "-pods"
		return r
	}
	cases := []struct {
		obj  client.Object
		want []string
	}{
		{&kftraining.TFJob{ObjectMeta: s.objectMeta("tf"), Spec: kftraining.TFJobSpec{
			RunPolicy: kftraining.RunPolicy{Suspend: ptr.To(true)},
			TFReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				kftraining.TFJobReplicaTypeEval: tfTemplate(1), kftraining.TFJobReplicaTypeWorker: tfTemplate(3),
				kftraining.TFJobReplicaTypePS: tfTemplate(2), kftraining.TFJobReplicaTypeChief: tfTemplate(1)}}},
			[]string{"chief=1", "ps=2", "worker=3", "evaluator=1"}},
		{&kftraining.XGBoostJob{ObjectMeta: s.objectMeta("xgb"), Spec: kftraining.XGBoostJobSpec{
			RunPolicy: kftraining.RunPolicy{Suspend: ptr.To(true)},
			XGBReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				kftraining.XGBoostJobReplicaTypeWorker: v1Replica(2), kftraining.XGBoostJobReplicaTypeMaster: v1Replica(1)}}},
			[]string{"master=1", "worker=2"}},
		{&kftraining.PaddleJob{ObjectMeta: s.objectMeta("paddle"), Spec: kftraining.PaddleJobSpec{
			RunPolicy: kftraining.RunPolicy{Suspend: ptr.To(true)},
			PaddleReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				kftraining.PaddleJobReplicaTypeWorker: v1Replica(2), kftraining.PaddleJobReplicaTypeMaster: v1Replica(1)}}},
			[]string{"master=1", "worker=2"}},
		{&kftraining.JAXJob{ObjectMeta: s.objectMeta("jax"), Spec: kftraining.JAXJobSpec{
			RunPolicy:       kftraining.RunPolicy{Suspend: ptr.To(true)},
			JAXReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{kftraining.JAXJobReplicaTypeWorker: v1Replica(4)}}},
			[]string{"worker=4"}},
	}
	for _, c := range cases {
		s.create(c.obj)
	}
	for _, c := range cases {
		wl := s.waitWorkload(c.obj)
		if got := podSetNames(wl); !slices.Equal(got, c.want) {
			t.Fatalf("%T: podsets %v, want %v", c.obj, got, c.want)
		}
		if _, tf := c.obj.(*kftraining.TFJob); tf && (ptr.Deref(wl.Spec.Priority, 0) != 42 || wl.Spec.PriorityClassRef == nil ||
			wl.Spec.PriorityClassRef.Kind != kueue.PodPriorityClassKind) {
			t.Fatalf("TFJob priority %v ref %+v, want 42 from the pods' PriorityClass", wl.Spec.Priority, wl.Spec.PriorityClassRef)
		}
		s.waitRunning(c.obj)
		s.operator(c.obj, running)
		s.operator(c.obj, succeeded)
		s.waitFinished(c.obj)
	}
	s.waitQuotaFree()
}

// An MPIJob naming a prebuilt Workload gets no Workload of its own; it
// adopts the prebuilt one once it exists, runs when it is admitted, and
// finishes it.
func TestMPIJobUsesItsPrebuiltWorkload(t *testing.T) {
	s := setUp(t, "4")
	job := mpiJob(s, "pre", 1)
	job.Labels[jobframework.PrebuiltWorkloadLabel] = "ready-made"
	s.create(job)
	if err := s.m.WaitCycles(3, 10*time.Second, func() error {
		if wl := s.workload(job); wl != nil {
			return fmt.Errorf("an MPIJob with a prebuilt Workload name must not get a Workload of its own")
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
	s.waitRunning(job)
	var wl kueue.Workload
	if err := s.c.Get(t.Context(), client.ObjectKey{Namespace: s.ns, Name: "ready-made"}, &wl); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&wl, job) {
		t.Fatalf("the prebuilt Workload is not owned by its MPIJob: %+v", wl.OwnerReferences)
	}
	s.operator(job, running)
	s.operator(job, succeeded)
	s.eventually("the prebuilt Workload finished", func() error {
		if err := s.c.Get(t.Context(), client.ObjectKey{Namespace: s.ns, Name: "ready-made"}, &wl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("conditions %+v", wl.Status.Conditions)
		}
		return nil
	})
	s.waitQuotaFree()
}
