// Package kubeflow queues the Kubeflow training jobs: the five Kubeflow
// Trainer v1 kinds (PyTorchJob, TFJob, XGBoostJob, PaddleJob and JAXJob,
// kubeflow.org/v1, from github.com/kubeflow/training-operator) and the MPI
// Operator's MPIJob (kubeflow.org/v2beta1, from
// github.com/kubeflow/mpi-operator).
//
// Every kind is a map of replica specs (a replica count and a pod template
// per replica type) under a run policy whose suspend field holds the job.
// One adapter, Job, serves them all: each replica type present is one
// PodSet, named after the lower-cased replica type, in the kind's fixed
// order (Kueue's); an admission goes into each replica type's pod template
// and lifts runPolicy.suspend; the job is finished once its Succeeded or
// Failed condition is true. Each kind only says where its replica specs,
// run policy and status are, in a small file of its own.
package kubeflow

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// replica is one replica type of a job, as the adapter sees it.
type replica struct {
	// typ is the replica type as the job spells it ("Master", "Worker").
	typ string
	// replicas is the spec's count, nil when unset.
	replicas *int32
	// template is the replica type's pod template, in the job object.
	template *corev1.PodTemplateSpec
}

// condition is one of a job's status conditions.
type condition struct {
	typ     string
	status  corev1.ConditionStatus
	message string
}

// source is what a kind tells the adapter about one job object. It reads
// the object on every call, as the object may be filled in after the
// adapter is made (the reconciler reads into it).
type source interface {
	object() client.Object
	// suspend is the run policy's suspend field.
	suspend() **bool
	// replicas lists the replica specs present, in any order; a nil spec
	// has a nil template.
	replicas() []replica
	// conditions lists the status conditions.
	conditions() []condition
	// active sums the replica statuses' active pods.
	active() int32
	// kind describes the kind.
	kind() *kindInfo
	// managedBy is the run policy's managedBy field.
	managedBy() **string
	// wrap reads another object of the same kind.
	wrap(obj client.Object) source
	// copyStatus copies from's status (an object of the same kind); it
	// reports whether anything changed.
	copyStatus(from client.Object) bool
	// clearStatus empties the status.
	clearStatus()
	// clearRun zeroes the active pod counts and the start time; it
	// reports whether anything changed.
	clearRun() bool
}

// kindInfo is what differs between the kinds besides where the fields are.
type kindInfo struct {
	// order lists the replica types the kind knows, in PodSet order.
	order []string
	// defaultReplicas is a replica type's count when its spec leaves it
	// unset (the operator's defaulting).
	defaultReplicas func(typ string) int32
	// specsPath is the path of the replica specs map, for errors.
	specsPath *field.Path
	// required lists the replica types a job must have.
	required func(obj client.Object) []string
	// single lists the replica types whose count must be 1.
	single []string
}

// Job is one Kubeflow job seen through the jobframework contract.
type Job struct{ src source }

var (
	_ jobframework.JobWithSuspendField  = (*Job)(nil)
	_ jobframework.JobWithPodIndex      = (*Job)(nil)
	_ jobframework.JobWithTemplatePaths = (*Job)(nil)
)

// replicaIndexLabel carries a pod's index within its replica type (the
// training operator's and the MPI operator's label).
const replicaIndexLabel = "training.kubeflow.org/replica-index"

// PodIndex: the operators label each pod with its replica index.
func (j *Job) PodIndex(*kueue.PodSet) jobframework.PodIndex {
	return jobframework.PodIndex{Label: replicaIndexLabel}
}

// TemplatePath is the replica type's pod template.
func (j *Job) TemplatePath(name kueue.PodSetReference) *field.Path {
	for _, r := range j.src.replicas() {
		if podSetName(r.typ) == name {
			return j.src.kind().specsPath.Key(r.typ).Child("template")
		}
	}
	return nil
}

// Object returns the job object.
func (j *Job) Object() client.Object { return j.src.object() }

// IsSuspended reports runPolicy.suspend.
func (j *Job) IsSuspended() bool { return ptr.Deref(*j.src.suspend(), false) }

// Suspend sets runPolicy.suspend.
func (j *Job) Suspend() { *j.src.suspend() = ptr.To(true) }

// SuspendField names spec.runPolicy.suspend in the webhook's errors.
func (j *Job) SuspendField() *field.Path { return field.NewPath("spec", "runPolicy", "suspend") }

// podSetName is the PodSet of a replica type: its lower-cased name.
func podSetName(typ string) kueue.PodSetReference {
	return kueue.PodSetReference(strings.ToLower(typ))
}

// ordered lists the job's replica types in the kind's PodSet order. A
// replica type the kind does not know, or a spec left empty, is an error
// naming the field: its pods could not be accounted for.
func (j *Job) ordered() ([]replica, error) {
	k := j.src.kind()
	present := j.src.replicas()
	out := make([]replica, 0, len(present))
	for _, typ := range k.order {
		for _, r := range present {
			if r.typ == typ {
				out = append(out, r)
			}
		}
	}
	for _, r := range present {
		path := k.specsPath.Key(r.typ)
		switch {
		case !knownType(k, r.typ):
			return nil, fmt.Errorf("%s: unsupported replica type (supported: %s)", path, strings.Join(k.order, ", "))
		case r.template == nil:
			return nil, fmt.Errorf("%s: the replica spec is empty", path)
		case r.replicas != nil && *r.replicas < 0:
			return nil, fmt.Errorf("%s: must not be negative", path.Child("replicas"))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no replica type is set", k.specsPath)
	}
	return out, nil
}

func knownType(k *kindInfo, typ string) bool {
	for _, t := range k.order {
		if t == typ {
			return true
		}
	}
	return false
}

// count is a replica type's pod count.
func (j *Job) count(r replica) int32 {
	if r.replicas != nil {
		return *r.replicas
	}
	return j.src.kind().defaultReplicas(r.typ)
}

// PodSets returns one PodSet per replica type present, in the kind's
// order, with the replica count and a copy of the pod template.
func (j *Job) PodSets() ([]kueue.PodSet, error) {
	reps, err := j.ordered()
	if err != nil {
		return nil, err
	}
	out := make([]kueue.PodSet, 0, len(reps))
	for _, r := range reps {
		out = append(out, kueue.PodSet{Name: podSetName(r.typ), Count: j.count(r), Template: *r.template.DeepCopy()})
	}
	return out, nil
}

// byPodSet finds each info's replica type. Every replica type must have
// its info and every info its replica type.
func (j *Job) byPodSet(infos []jobframework.PodSetInfo) ([]*corev1.PodTemplateSpec, error) {
	reps, err := j.ordered()
	if err != nil {
		return nil, err
	}
	if len(infos) != len(reps) {
		return nil, fmt.Errorf("the job has %d replica types, the admission has %d PodSets", len(reps), len(infos))
	}
	out := make([]*corev1.PodTemplateSpec, len(infos))
	for i, info := range infos {
		for _, r := range reps {
			if podSetName(r.typ) == info.Name {
				out[i] = r.template
			}
		}
		if out[i] == nil {
			return nil, fmt.Errorf("the admission's PodSet %q is no replica type of the job", info.Name)
		}
	}
	return out, nil
}

// RunWithPodSetsInfo puts the admission (the flavors' node selectors and
// tolerations, the Workload's labels and annotations) into each replica
// type's pod template and lifts runPolicy.suspend. Counts stay: these
// kinds are admitted whole.
func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	templates, err := j.byPodSet(infos)
	if err != nil {
		return err
	}
	for i, info := range infos {
		if err := jobframework.ApplyToTemplate(templates[i], info); err != nil {
			return err
		}
	}
	*j.src.suspend() = ptr.To(false)
	return nil
}

// RestorePodSetsInfo puts each replica type's pod template back as the
// Workload recorded it.
func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	templates, err := j.byPodSet(infos)
	if err != nil {
		return false
	}
	changed := false
	for i, info := range infos {
		if jobframework.RestoreTemplate(templates[i], info) {
			changed = true
		}
	}
	return changed
}

// Finished reads the Succeeded and Failed conditions.
func (j *Job) Finished() (string, bool, bool) {
	for _, c := range j.src.conditions() {
		if c.status != corev1.ConditionTrue {
			continue
		}
		switch c.typ {
		case "Succeeded":
			msg := c.message
			if msg == "" {
				msg = "Job finished successfully"
			}
			return msg, true, true
		case "Failed":
			msg := c.message
			if msg == "" {
				msg = "Job failed"
			}
			return msg, false, true
		}
	}
	return "", false, false
}

// IsActive reports pods the operator still counts as active.
func (j *Job) IsActive() bool { return j.src.active() > 0 }

// PodsReady reports the Running condition (the operator sets it once every
// replica's pods run), or Succeeded.
func (j *Job) PodsReady() bool {
	for _, c := range j.src.conditions() {
		if c.status == corev1.ConditionTrue && (c.typ == "Running" || c.typ == "Succeeded") {
			return true
		}
	}
	return false
}
