package batchjob

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The webhook holds an elastic Job's pods with the elastic gate, only when
// the feature is on and the Job opts in.
func TestElasticJobTemplateIsGated(t *testing.T) {
	on := jobframework.Options{ElasticJobs: true}
	j := newJob(ptr.To[int32](3), nil)
	j.Annotations[kueue.ElasticJobAnnotation] = "true"
	gateElastic(New(j), on)
	gateElastic(New(j), on) // once only
	if gates := j.Spec.Template.Spec.SchedulingGates; len(gates) != 1 || gates[0].Name != kueue.ElasticJobSchedulingGate {
		t.Fatalf("gates %v, want the elastic gate once", gates)
	}
	plain := newJob(ptr.To[int32](3), nil)
	gateElastic(New(plain), on)
	off := newJob(ptr.To[int32](3), nil)
	off.Annotations[kueue.ElasticJobAnnotation] = "true"
	gateElastic(New(off), jobframework.Options{})
	if len(plain.Spec.Template.Spec.SchedulingGates)+len(off.Spec.Template.Spec.SchedulingGates) != 0 {
		t.Fatal("a Job that does not opt in, or with the feature off, must not be gated")
	}
}

// The elastic opt-in is fixed at creation and excludes partial admission;
// a partially admitted Job cannot change its parallelism while it runs.
func TestValidateElasticAndPartialAdmission(t *testing.T) {
	both := newJob(ptr.To[int32](4), nil)
	both.Annotations[kueue.ElasticJobAnnotation] = "true"
	both.Annotations[MinParallelismAnnotation] = "2"
	if errs := validate(nil, New(both)); len(errs) != 1 || !strings.Contains(errs[0].Field, MinParallelismAnnotation) {
		t.Errorf("elastic with partial admission: %v", errs)
	}

	running := func(annotations map[string]string, parallelism int32) jobframework.Job {
		j := newJob(ptr.To(parallelism), nil)
		j.Spec.Suspend = ptr.To(false)
		for k, v := range annotations {
			j.Annotations[k] = v
		}
		return New(j)
	}
	elastic := map[string]string{kueue.ElasticJobAnnotation: "true"}
	if errs := validate(running(elastic, 2), running(elastic, 6)); len(errs) != 0 {
		t.Errorf("an elastic Job scaling while it runs: %v", errs)
	}
	w := &jobframework.Webhook{Integration: Integration, Validate: validate}
	if err := w.ValidateUpdate(context.Background(), running(nil, 2).Object(), running(elastic, 2).Object()); err == nil ||
		!strings.Contains(err.Error(), kueue.ElasticJobAnnotation) {
		t.Errorf("adding the opt-in: %v", err)
	}
	if err := w.ValidateUpdate(context.Background(), running(elastic, 2).Object(), running(nil, 2).Object()); err == nil {
		t.Error("removing the opt-in was accepted")
	}
	partial := map[string]string{MinParallelismAnnotation: "1"}
	if errs := validate(running(partial, 2), running(partial, 3)); len(errs) != 1 || errs[0].Field != "spec.parallelism" {
		t.Errorf("a partially admitted Job scaling while it runs: %v", errs)
	}
}

// Starting an elastic Job is allowed under its admitted Workload slice,
// whose name is not the Job's first Workload's; it is refused while no
// slice of the Job is admitted.
func TestStartingAnElasticJobChecksItsAdmittedSlice(t *testing.T) {
	suspended := newJob(ptr.To[int32](3), nil)
	suspended.UID = "uid"
	suspended.Labels = map[string]string{jobframework.QueueNameLabel: "lq"}
	suspended.Annotations[kueue.ElasticJobAnnotation] = "true"
	slice := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns",
		Name:   jobframework.SliceWorkloadName(suspended.Name, suspended.UID, GVK, "job-first"),
		Labels: map[string]string{jobframework.JobUIDLabel: "uid"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: suspended.Name, UID: "uid",
			Controller: ptr.To(true)}}}}
	f := newFinalizerFixture(t, batchIntegration(), slice)
	w := &jobframework.Webhook{Client: f.c, Integration: Integration, Options: jobframework.Options{ElasticJobs: true}, Validate: validate}
	started := suspended.DeepCopy()
	started.Spec.Suspend = ptr.To(false)
	if err := w.ValidateUpdate(context.Background(), suspended, started); err == nil {
		t.Fatal("the Job started while its slice is not admitted")
	}
	slice.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted",
		LastTransitionTime: metav1.Now()}}
	if err := f.c.Status().Update(context.Background(), slice); err != nil {
		t.Fatal(err)
	}
	if err := w.ValidateUpdate(context.Background(), suspended, started); err != nil {
		t.Errorf("the Job may start under its admitted slice %s: %v", slice.Name, err)
	}
}
