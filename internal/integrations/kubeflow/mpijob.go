package kubeflow

import (
	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v2beta1-mpijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=mpijobs,verbs=create,versions=v2beta1,name=mmpijob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v2beta1-mpijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=mpijobs,verbs=create;update,versions=v2beta1,name=vmpijob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/status,verbs=get
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/finalizers,verbs=get;update;patch

// MPIJobGVK is the MPI Operator's kind, kubeflow.org/v2beta1 MPIJob.
var MPIJobGVK = mpi.SchemeGroupVersionKind

// MPIJobIntegration registers kubeflow.org/v2beta1 MPIJobs: PodSets
// launcher (required, one pod) and worker (none unless replicas says).
// With runLauncherAsWorker the launcher is also an MPI rank; its pod is
// still the launcher PodSet.
var MPIJobIntegration = mpiJobIntegration()

var mpiKind = kindInfo{
	order: []string{string(mpi.MPIReplicaTypeLauncher), string(mpi.MPIReplicaTypeWorker)},
	defaultReplicas: func(typ string) int32 {
		// The MPI Operator's defaulting: one launcher, no workers.
		if typ == string(mpi.MPIReplicaTypeLauncher) {
			return 1
		}
		return 0
	},
	specsPath: specPath.Child("mpiReplicaSpecs"),
	required:  func(client.Object) []string { return []string{string(mpi.MPIReplicaTypeLauncher)} },
	single:    []string{string(mpi.MPIReplicaTypeLauncher)},
}

func mpiJobIntegration() jobframework.Integration {
	in := jobframework.Integration{Name: "kubeflow.org/mpijob", GVK: MPIJobGVK, NewJob: newMPIJob, AddToScheme: mpi.AddToScheme}
	in.SetupWebhook = func(mgr ctrl.Manager, opts jobframework.Options) error {
		return setupWebhook(mgr, opts, in, &mpi.MPIJob{})
	}
	return in
}

// newMPIJob wraps obj, which must be an *MPIJob (a new one when nil).
func newMPIJob(obj client.Object) jobframework.Job {
	if obj == nil {
		obj = &mpi.MPIJob{}
	}
	return &Job{src: mpiSource{obj.(*mpi.MPIJob)}}
}

// mpiSource reads one MPIJob.
type mpiSource struct{ job *mpi.MPIJob }

func (s mpiSource) object() client.Object { return s.job }
func (s mpiSource) kind() *kindInfo       { return &mpiKind }
func (s mpiSource) suspend() **bool       { return &s.job.Spec.RunPolicy.Suspend }

func (s mpiSource) replicas() []replica {
	out := make([]replica, 0, len(s.job.Spec.MPIReplicaSpecs))
	for typ, spec := range s.job.Spec.MPIReplicaSpecs {
		r := replica{typ: string(typ)}
		if spec != nil {
			r.replicas, r.template = spec.Replicas, &spec.Template
		}
		out = append(out, r)
	}
	return out
}

func (s mpiSource) conditions() []condition {
	out := make([]condition, 0, len(s.job.Status.Conditions))
	for _, c := range s.job.Status.Conditions {
		out = append(out, condition{typ: string(c.Type), status: c.Status, message: c.Message})
	}
	return out
}

func (s mpiSource) active() int32 {
	var n int32
	for _, rs := range s.job.Status.ReplicaStatuses {
		if rs != nil {
			n += rs.Active
		}
	}
	return n
}

func (s mpiSource) managedBy() **string { return &s.job.Spec.RunPolicy.ManagedBy }

func (s mpiSource) wrap(obj client.Object) source { return mpiSource{obj.(*mpi.MPIJob)} }

func (s mpiSource) copyStatus(from client.Object) bool {
	src, ok := from.(*mpi.MPIJob)
	if !ok {
		return false
	}
	return copyJobStatus(&s.job.Status, src.Status.DeepCopy())
}

func (s mpiSource) clearStatus() { s.job.Status = mpi.JobStatus{} }

func (s mpiSource) clearRun() bool {
	st := &s.job.Status
	changed := st.StartTime != nil
	st.StartTime = nil
	for _, rs := range st.ReplicaStatuses {
		if rs != nil && rs.Active != 0 {
			rs.Active, changed = 0, true
		}
	}
	return changed
}
