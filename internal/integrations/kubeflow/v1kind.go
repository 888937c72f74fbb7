package kubeflow

import (
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

var specPath = field.NewPath("spec")

// v1Kind is one Kubeflow Trainer v1 kind (kubeflow.org/v1): where its
// replica specs are; the run policy and status are the same types for all.
type v1Kind[T any, P interface {
	*T
	client.Object
}] struct {
	name      string
	gvk       schema.GroupVersionKind
	info      kindInfo
	specs     func(P) map[kftraining.ReplicaType]*kftraining.ReplicaSpec
	runPolicy func(P) *kftraining.RunPolicy
	status    func(P) *kftraining.JobStatus
}

// newJob wraps obj, which must be a P (a new one when nil).
func (k *v1Kind[T, P]) newJob(obj client.Object) jobframework.Job {
	if obj == nil {
		obj = P(new(T))
	}
	return &Job{src: v1Source[T, P]{k: k, obj: obj.(P)}}
}

// integration registers the kind under its framework name.
func (k *v1Kind[T, P]) integration() jobframework.Integration {
	in := jobframework.Integration{Name: k.name, GVK: k.gvk, NewJob: k.newJob, AddToScheme: kftraining.AddToScheme}
	in.SetupWebhook = func(mgr ctrl.Manager, opts jobframework.Options) error {
		return setupWebhook(mgr, opts, in, P(new(T)))
	}
	return in
}

// v1Source reads one job of a v1 kind.
type v1Source[T any, P interface {
	*T
	client.Object
}] struct {
	k   *v1Kind[T, P]
	obj P
}

func (s v1Source[T, P]) object() client.Object { return s.obj }
func (s v1Source[T, P]) kind() *kindInfo       { return &s.k.info }
func (s v1Source[T, P]) suspend() **bool       { return &s.k.runPolicy(s.obj).Suspend }

func (s v1Source[T, P]) replicas() []replica {
	specs := s.k.specs(s.obj)
	out := make([]replica, 0, len(specs))
	for typ, spec := range specs {
		r := replica{typ: string(typ)}
		if spec != nil {
			r.replicas, r.template = spec.Replicas, &spec.Template
		}
		out = append(out, r)
	}
	return out
}

func (s v1Source[T, P]) conditions() []condition {
	st := s.k.status(s.obj)
	out := make([]condition, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		out = append(out, condition{typ: string(c.Type), status: c.Status, message: c.Message})
	}
	return out
}

func (s v1Source[T, P]) active() int32 {
	var n int32
	for _, rs := range s.k.status(s.obj).ReplicaStatuses {
		if rs != nil {
			n += rs.Active
		}
	}
	return n
}

// one is the training operator's default replica count.
func one(string) int32 { return 1 }

func (s v1Source[T, P]) managedBy() **string { return &s.k.runPolicy(s.obj).ManagedBy }

func (s v1Source[T, P]) wrap(obj client.Object) source { return v1Source[T, P]{k: s.k, obj: obj.(P)} }

func (s v1Source[T, P]) copyStatus(from client.Object) bool {
	src, ok := from.(P)
	if !ok {
		return false
	}
	return copyJobStatus(s.k.status(s.obj), s.k.status(src).DeepCopy())
}

func (s v1Source[T, P]) clearStatus() { *s.k.status(s.obj) = kftraining.JobStatus{} }

func (s v1Source[T, P]) clearRun() bool {
	st := s.k.status(s.obj)
	changed := st.StartTime != nil
	st.StartTime = nil
	for _, rs := range st.ReplicaStatuses {
		if rs != nil && rs.Active != 0 {
			rs.Active, changed = 0, true
		}
	}
	return changed
}

// copyJobStatus copies src into dst; it reports whether they differed.
func copyJobStatus[S any](dst, src *S) bool {
	if equality.Semantic.DeepEqual(*dst, *src) {
		return false
	}
	*dst = *src
	return true
}
