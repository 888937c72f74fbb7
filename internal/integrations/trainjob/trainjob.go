// Package trainjob queues Kubeflow Trainer v2 TrainJobs
// (trainer.kubeflow.org/v1alpha1). A TrainJob names a TrainingRuntime or a
// ClusterTrainingRuntime (spec.runtimeRef) whose JobSet template, with the
// TrainJob's trainer settings applied, gives one PodSet per replicated
// job. The TrainJob is held by spec.suspend; on admission the flavors'
// node selectors and tolerations go into the TrainJob's own runtime patch
// (spec.runtimePatches, manager kueue.x-k8s.io/manager), which is removed
// again when it is stopped.
//
// The trainer's Go API package does not compile against the k8s.io/api
// Kuota builds with, so TrainJobs and runtimes are handled as unstructured
// objects through the accessors of fields.go; the runtime's JobSet
// template is decoded into the real JobSet type.
package trainjob

import (
	"context"
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The TrainJob kind.
const (
	Group   = "trainer.kubeflow.org"
	Version = "v1alpha1"
	// FrameworkName is the integrations.frameworks name.
	FrameworkName = "trainer.kubeflow.org/trainjob"
	// PatchManager is the manager of the runtime patch Kuota writes.
	PatchManager = "kueue.x-k8s.io/manager"
	// Condition types the trainer sets when a TrainJob ends.
	ConditionComplete = "Complete"
	ConditionFailed   = "Failed"
)

// GVK is the kind this package handles.
var GVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: "TrainJob"}

// TrainJob wraps an unstructured TrainJob and, once loaded, the replicated
// jobs its runtime gives it.
type TrainJob struct {
	u *unstructured.Unstructured
	// jobs are the resolved replicated jobs (nil until loaded); loadErr
	// why they could not be resolved.
	jobs    []replicatedJob
	loadErr error
}

var (
	_ jobframework.Job                    = (*TrainJob)(nil)
	_ jobframework.JobWithPrerequisites   = (*TrainJob)(nil)
	_ jobframework.JobWithReclaimablePods = (*TrainJob)(nil)
	_ jobframework.JobWithPodIndex        = (*TrainJob)(nil)
)

// PodIndex: the trainer runs a JobSet, whose pods carry their completion
// index within their Job and their Job's index among the replicas.
func (t *TrainJob) PodIndex(ps *kueue.PodSet) jobframework.PodIndex {
	ix := jobframework.PodIndex{Label: batchv1.JobCompletionIndexAnnotation, SubGroupLabel: jobset.JobIndexKey}
	for _, rj := range t.jobs {
		if rj.Name == string(ps.Name) {
			ix.SubGroupCount = ptr.To(rj.Replicas)
		}
	}
	return ix
}

// New wraps obj, an *unstructured.Unstructured TrainJob (a new one when
// nil). Its GVK is set, so that clients and caches know the kind.
func New(obj client.Object) jobframework.Job {
	u, _ := obj.(*unstructured.Unstructured)
	if u == nil {
		u = &unstructured.Unstructured{Object: map[string]any{}}
	}
	if u.GroupVersionKind().Empty() {
		u.SetGroupVersionKind(GVK)
	}
	return &TrainJob{u: u, loadErr: errNotLoaded}
}

var errNotLoaded = errors.New("the TrainJob's runtime has not been read")

// Object returns the TrainJob.
func (t *TrainJob) Object() client.Object { return t.u }

// IsSuspended reports spec.suspend (a value of another type counts as
// not suspended).
func (t *TrainJob) IsSuspended() bool {
	v, _ := boolAt(t.u.Object, suspendPath)
	return v
}

// Suspend sets spec.suspend.
func (t *TrainJob) Suspend() { setAt(t.u, true, suspendPath) }

// LoadPrerequisites reads the runtime and resolves the replicated jobs. A
// missing runtime is remembered, not returned.
func (t *TrainJob) LoadPrerequisites(ctx context.Context, c client.Reader) error {
	t.jobs, t.loadErr = nil, nil
	rt, err := readRuntime(ctx, c, t.u)
	if err == nil {
		t.jobs, err = resolveJobs(t.u, rt)
	}
	var read readError
	if errors.As(err, &read) {
		return err
	}
	// A missing runtime or a field Kuota cannot read: PodSets reports it.
	t.loadErr = err
	return nil
}

// PodSets returns one PodSet per replicated job, in the runtime's order,
// of replicas × pods per replica.
func (t *TrainJob) PodSets() ([]kueue.PodSet, error) {
	if t.loadErr != nil {
		return nil, t.loadErr
	}
	out := make([]kueue.PodSet, 0, len(t.jobs))
	for _, rj := range t.jobs {
		out = append(out, kueue.PodSet{
			Name:     kueue.PodSetReference(rj.Name),
			Count:    rj.Replicas * rj.PodsPerReplica,
			Template: *rj.Template.DeepCopy(),
		})
	}
	return out, nil
}

// Finished reads the trainer's Complete and Failed conditions.
func (t *TrainJob) Finished() (string, bool, bool) {
	conds := t.conditions()
	if c := meta.FindStatusCondition(conds, ConditionComplete); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message, true, true
	}
	if c := meta.FindStatusCondition(conds, ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message, false, true
	}
	return "", false, false
}

func (t *TrainJob) conditions() []metav1.Condition {
	items, err := listAt(t.u.Object, conditionsPath)
	if err != nil {
		return nil
	}
	out := make([]metav1.Condition, 0, len(items))
	for _, it := range items {
		typ, _ := stringAt(it, conditionTypePath)
		status, _ := stringAt(it, conditionStatusPath)
		msg, _ := stringAt(it, conditionMessagePath)
		out = append(out, metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Message: msg})
	}
	return out
}

// jobStatus is one entry of status.jobsStatus: counts of child Jobs.
type jobStatus struct {
	name                     string
	ready, succeeded, active int32
}

func (t *TrainJob) jobsStatus() []jobStatus {
	items, err := listAt(t.u.Object, jobsStatusPath)
	if err != nil {
		return nil
	}
	out := make([]jobStatus, 0, len(items))
	for _, it := range items {
		s := jobStatus{}
		s.name, _ = stringAt(it, jobStatusNamePath)
		s.ready, _, _ = int32At(it, jobStatusReadyPath)
		s.succeeded, _, _ = int32At(it, jobStatusSucceededPath)
		s.active, _, _ = int32At(it, jobStatusActivePath)
		out = append(out, s)
	}
	return out
}

// IsActive reports a child Job with pods running or pending.
func (t *TrainJob) IsActive() bool {
	for _, s := range t.jobsStatus() {
		if s.active > 0 {
			return true
		}
	}
	return false
}

// PodsReady reports whether every child Job is ready or has succeeded.
func (t *TrainJob) PodsReady() bool {
	if t.loadErr != nil {
		return false
	}
	var want, have int32
	for _, rj := range t.jobs {
		want += rj.Replicas
	}
	for _, s := range t.jobsStatus() {
		have += s.ready + s.succeeded
	}
	return want > 0 && have >= want
}

// ReclaimablePods gives back the pods of the child Jobs that succeeded.
func (t *TrainJob) ReclaimablePods() []kueue.ReclaimablePod {
	if t.loadErr != nil {
		return nil
	}
	status := map[string]jobStatus{}
	for _, s := range t.jobsStatus() {
		status[s.name] = s
	}
	var out []kueue.ReclaimablePod
	for _, rj := range t.jobs {
		if s, ok := status[rj.Name]; ok && s.succeeded > 0 {
			out = append(out, kueue.ReclaimablePod{Name: kueue.PodSetReference(rj.Name), Count: min(s.succeeded, rj.Replicas) * rj.PodsPerReplica})
		}
	}
	return out
}
