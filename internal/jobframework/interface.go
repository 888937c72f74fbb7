// Package jobframework is the contract between Kuota and the job kinds it
// queues, and the generic machinery every kind shares: a reconciler that
// creates and owns each job's Workload, starts the job once the Workload is
// admitted (injecting the flavors' node labels and tolerations) and stops
// it when the Workload is evicted; the mutating and validating webhook
// steps common to all kinds; and the registry the manager enables kinds
// from. A job kind implements Job (and, where it applies, the optional
// interfaces) in its own package under internal/integrations.
package jobframework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Job is one job object seen through the contract. Methods that change the
// job change the wrapped object in memory; the reconciler writes it.
type Job interface {
	// Object is the wrapped API object.
	Object() client.Object
	// IsSuspended reports whether the job is held (no pods may run).
	IsSuspended() bool
	// Suspend holds the job.
	Suspend()
	// PodSets describes the job's pods as Workload PodSets, in a stable
	// order, with counts and (for partial admission) minimum counts.
	PodSets() ([]kueue.PodSet, error)
	// RunWithPodSetsInfo applies an admission (node selectors,
	// tolerations, labels, annotations and counts per PodSet) and lifts the
	// suspension.
	RunWithPodSetsInfo(infos []PodSetInfo) error
	// RestorePodSetsInfo puts back what RunWithPodSetsInfo changed, from
	// the job's original PodSets; it reports whether anything changed.
	RestorePodSetsInfo(infos []PodSetInfo) bool
	// Finished reports whether the job is over, whether it succeeded, and
	// a message for the Workload's Finished condition.
	Finished() (message string, success, finished bool)
	// IsActive reports whether any of the job's pods still run (or are
	// terminating), so that its quota cannot be given back yet.
	IsActive() bool
	// PodsReady reports whether at least the admitted count of pods of
	// every PodSet is ready or has succeeded.
	PodsReady() bool
}

// JobWithReclaimablePods is a Job whose finished pods may give their quota
// back before the whole job ends.
type JobWithReclaimablePods interface {
	Job
	// ReclaimablePods lists, per PodSet, how many pods' quota is no longer
	// needed.
	ReclaimablePods() []kueue.ReclaimablePod
}

// JobWithPodSelector is a Job whose pods can be found from the job's UID
// alone, even once the job object is gone: a label its pods carry. The
// reconciler reads them only while a Workload waits for its job's pods to
// go. A kind without it has its pods found by their controller owner
// reference, listing the namespace's pods. Either way the pods labelled
// PodJobUIDLabel with the job's UID are the job's too (JobPodFinder).
type JobWithPodSelector interface {
	Job
	// PodSelector selects the pods of the job with that UID. It must not
	// read the wrapped object, which may be empty.
	PodSelector(uid types.UID) labels.Selector
}

// JobWithSuspendField is a Job held by a field other than spec.suspend
// (the Kubeflow jobs' spec.runPolicy.suspend): errors about starting it
// name that field.
type JobWithSuspendField interface {
	Job
	// SuspendField is the path of the field that holds the job.
	SuspendField() *field.Path
}

// PodSetInfo is what an admission applies to one PodSet's pod template, or
// what restoring the job puts back. SchedulingGates are the gates the
// pods are created with: a topology-aware admission adds TopologyGate,
// restoring puts back the template's own.
type PodSetInfo struct {
	Name            kueue.PodSetReference
	Count           int32
	NodeSelector    map[string]string
	Tolerations     []corev1.Toleration
	Labels          map[string]string
	Annotations     map[string]string
	SchedulingGates []corev1.PodSchedulingGate
}

// Integration registers one job kind.
type Integration struct {
	// Name is the framework name of the Configuration's
	// integrations.frameworks, for instance "batch/job".
	Name string
	// GVK is the job kind.
	GVK schema.GroupVersionKind
	// NewJob wraps obj, an object of the kind (a new empty one when nil).
	NewJob func(obj client.Object) Job
	// AddToScheme registers the kind's types; nil for built-in kinds.
	AddToScheme func(*runtime.Scheme) error
	// SetupWebhook registers the kind's mutating and validating webhooks.
	SetupWebhook func(mgr ctrl.Manager, opts Options) error
	// Elastic is set for the kinds whose jobs may change their pod counts
	// while they run, when annotated kueue.ElasticJobAnnotation
	// (elastic.go).
	Elastic bool

	// The fields below serve the kinds that are not one job object with
	// spec.suspend: plain pods and pod groups, and the parents whose pods
	// are gated (Deployments, StatefulSets, LeaderWorkerSets).

	// Requires names the frameworks this one turns on with it (Kueue's
	// implicitly enabled frameworks): "pod" for the kinds whose pods the
	// pod integration gates.
	Requires []string
	// SetupReconciler, when set, is the kind's controller, instead of the
	// generic Job reconciler (which needs NewJob). A kind with neither has
	// no controller of its own (a Deployment's pods are queued one by one
	// by the pod integration).
	SetupReconciler func(mgr ctrl.Manager, opts Options) error
	// DefaultPod completes, in the pod webhook, a pod whose template
	// carries the pod-suspending-parent annotation naming this integration:
	// the group it belongs to, its count, its role. It reports whether the
	// pod is to be managed at all (its parent may have gone). r reads from
	// the API server.
	DefaultPod func(ctx context.Context, r client.Reader, pod *corev1.Pod) (bool, error)
}

// MultiKueueManagedBy is the managedBy value of a job MultiKueue runs in a
// worker cluster: the kind's own controller in the manager cluster leaves
// it alone.
const MultiKueueManagedBy = "kueue.x-k8s.io/multikueue"

// JobWithManagedBy is a Job whose kind has a managedBy field.
type JobWithManagedBy interface {
	Job
	// ManagedBy returns the job's managedBy, nil when unset.
	ManagedBy() *string
	// SetManagedBy sets it.
	SetManagedBy(*string)
}

// JobWithRemote is a Job MultiKueue can run in a worker cluster: a copy is
// created there and the worker's status is mirrored into the manager's
// job.
type JobWithRemote interface {
	JobWithManagedBy
	// RemoteCopy returns the object to create in a worker: the job's name,
	// labels, annotations and spec, without what the manager's API server
	// derived from the job's UID, without managedBy, suspended.
	RemoteCopy() client.Object
	// SyncStatus copies the status of the worker's job (an object of the
	// same kind); it reports whether anything changed.
	SyncStatus(remote client.Object) bool
	// ClearStatus forgets the run the mirrored status describes (running
	// pods, start time) once the worker's job is gone and the job is
	// suspended; it reports whether anything changed.
	ClearStatus() bool
}

// JobWithRemoteSpec is a JobWithRemote some of whose spec edits in the
// manager are carried to the worker's running job (Kueue's
// MultiKueueRemoteSpecSync).
type JobWithRemoteSpec interface {
	JobWithRemote
	// SyncSpec copies those parts of the job's spec into the worker's job
	// (an object of the same kind); it reports whether the worker's job
	// changed.
	SyncSpec(remote client.Object) bool
}
