// Package spark queues the Spark operator's SparkApplications
// (sparkoperator.k8s.io/v1beta2, from github.com/kubeflow/spark-operator/v2).
// A SparkApplication becomes two PodSets, "driver" (one pod) and
// "executor" (spec.executor.instances pods), whose pod templates are the
// pods Spark would create: spec.driver.template or spec.executor.template
// with the typed fields (cores, memory and its overhead, GPU, node
// selector, tolerations, affinity, labels, annotations, priority class...)
// applied, and the requests Spark computes from them. The application is
// held by spec.suspend; an admission goes into spec.driver and
// spec.executor (nodeSelector, tolerations, labels, annotations), or into
// spec.nodeSelector when the application sets its node selector there.
// Spark's dynamic allocation is refused: the executors' count must be
// known before admission.
package spark

import (
	"fmt"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FrameworkName is the framework name of SparkApplications.
const FrameworkName = "sparkoperator.k8s.io/sparkapplication"

// GVK is the SparkApplication kind.
var GVK = sparkv1beta2.GroupVersion.WithKind("SparkApplication")

// PodSet names, in the order of the Workload's PodSets.
const (
	DriverPodSet   kueue.PodSetReference = "driver"
	ExecutorPodSet kueue.PodSetReference = "executor"
)

// Integration registers SparkApplications.
var Integration = jobframework.Integration{
	Name:         FrameworkName,
	GVK:          GVK,
	NewJob:       New,
	AddToScheme:  sparkv1beta2.AddToScheme,
	SetupWebhook: setupWebhook,
}

// Application wraps a SparkApplication. The Spark operator submits it
// (creating the driver pod, which creates the executors) once spec.suspend
// is false, and deletes its pods when spec.suspend is set again.
type Application struct {
	app *sparkv1beta2.SparkApplication
}

var _ jobframework.Job = (*Application)(nil)

// New wraps obj, which must be a *sparkv1beta2.SparkApplication (a new one
// when nil).
func New(obj client.Object) jobframework.Job {
	if obj == nil {
		return &Application{app: &sparkv1beta2.SparkApplication{}}
	}
	return &Application{app: obj.(*sparkv1beta2.SparkApplication)}
}

// Object returns the SparkApplication.
func (a *Application) Object() client.Object { return a.app }

// IsSuspended reports spec.suspend.
func (a *Application) IsSuspended() bool { return ptr.Deref(a.app.Spec.Suspend, false) }

// Suspend sets spec.suspend.
func (a *Application) Suspend() { a.app.Spec.Suspend = ptr.To(true) }

// PodSets returns the driver and the executors.
func (a *Application) PodSets() ([]kueue.PodSet, error) {
	count, errs := executorCount(a.app)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	driver, errs := podTemplate(a.app, driverRole)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	executor, errs := podTemplate(a.app, executorRole)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return []kueue.PodSet{
		{Name: DriverPodSet, Count: 1, Template: *driver},
		{Name: ExecutorPodSet, Count: count, Template: *executor},
	}, nil
}

// Finished reports an application the operator gave up on: COMPLETED
// (success), FAILED or SUBMISSION_FAILED.
func (a *Application) Finished() (string, bool, bool) {
	st := a.app.Status.AppState
	switch st.State {
	case sparkv1beta2.ApplicationStateCompleted, sparkv1beta2.ApplicationStateFailed, sparkv1beta2.ApplicationStateFailedSubmission:
	default:
		return "", false, false
	}
	msg := st.ErrorMessage
	if msg == "" {
		msg = fmt.Sprintf("SparkApplication %s", st.State)
	}
	return msg, st.State == sparkv1beta2.ApplicationStateCompleted, true
}

// IsActive reports an application whose pods may still run: any state but
// new (never submitted), SUSPENDED and the final ones. While SUSPENDING the
// operator is still deleting the pods.
func (a *Application) IsActive() bool {
	switch a.app.Status.AppState.State {
	case sparkv1beta2.ApplicationStateNew, sparkv1beta2.ApplicationStateSuspended,
		sparkv1beta2.ApplicationStateCompleted, sparkv1beta2.ApplicationStateFailed, sparkv1beta2.ApplicationStateFailedSubmission:
		return false
	}
	return true
}

// PodsReady reports a RUNNING application (its driver runs) with at least
// as many executors running or completed as spec.executor.instances.
func (a *Application) PodsReady() bool {
	st := a.app.Status
	if st.AppState.State != sparkv1beta2.ApplicationStateRunning {
		return false
	}
	want, _ := executorCount(a.app)
	ready := int32(0)
	for _, s := range st.ExecutorState {
		if s == sparkv1beta2.ExecutorStateRunning || s == sparkv1beta2.ExecutorStateCompleted {
			ready++
		}
	}
	return ready >= want
}
