package jobframework

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// JobWithPrerequisites is a Job whose PodSets are built from other objects
// it references (a TrainJob's TrainingRuntime), which the job object alone
// does not hold.
type JobWithPrerequisites interface {
	Job
	// LoadPrerequisites reads the referenced objects; the reconciler
	// calls it at the start of each pass on a live, managed job. A
	// referenced object that does not exist is not an error here: the job
	// remembers it, and PodSets (and RunWithPodSetsInfo) then return a
	// *MissingPrerequisiteError. Other read failures are returned.
	LoadPrerequisites(ctx context.Context, c client.Reader) error
	// PrerequisiteWatches lists the kinds of the referenced objects and,
	// for a change to one of them, the jobs that reference it, so that a
	// job waiting for a missing object is reconciled once it appears. c
	// reads from the manager's cache.
	PrerequisiteWatches(c client.Reader) []PrerequisiteWatch
}

// PrerequisiteWatch is one kind of referenced object the reconciler
// watches, and the jobs a change to one of them concerns.
type PrerequisiteWatch struct {
	// Object is an empty object of the kind (an unstructured object with
	// its GVK set works).
	Object client.Object
	// Jobs lists the requests of the jobs that reference obj.
	Jobs func(ctx context.Context, obj client.Object) []reconcile.Request
}

// MissingPrerequisiteError says that a job references an object that does
// not exist (yet). Its Workload cannot be built; the reconciler records an
// event with the message and waits for the object to appear.
type MissingPrerequisiteError struct {
	// Message names the field of the job and the missing object.
	Message string
}

func (e *MissingPrerequisiteError) Error() string { return e.Message }

// isMissingPrerequisite reports an error that waits for a referenced
// object rather than a retry.
func isMissingPrerequisite(err error) bool {
	var m *MissingPrerequisiteError
	return errors.As(err, &m)
}

// loadPrerequisites reads what the job references, if it needs anything.
func loadPrerequisites(ctx context.Context, c client.Reader, job Job) error {
	if p, ok := job.(JobWithPrerequisites); ok {
		return p.LoadPrerequisites(ctx, c)
	}
	return nil
}
