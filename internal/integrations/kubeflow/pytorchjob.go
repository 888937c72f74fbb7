package kubeflow

import (
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-pytorchjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=pytorchjobs,verbs=create,versions=v1,name=mpytorchjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-pytorchjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=pytorchjobs,verbs=create;update,versions=v1,name=vpytorchjob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/status,verbs=get
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/finalizers,verbs=get;update;patch

// PyTorchJobIntegration registers kubeflow.org/v1 PyTorchJobs: PodSets
// master and worker. A PyTorchJob needs its Master, unless it is elastic
// (elasticPolicy set), and then only its workers run.
var PyTorchJobIntegration = pytorchJob.integration()

var pytorchJob = &v1Kind[kftraining.PyTorchJob, *kftraining.PyTorchJob]{
	name: "kubeflow.org/pytorchjob",
	gvk:  kftraining.GroupVersion.WithKind(kftraining.PyTorchJobKind),
	info: kindInfo{
		order:           []string{string(kftraining.PyTorchJobReplicaTypeMaster), string(kftraining.PyTorchJobReplicaTypeWorker)},
		defaultReplicas: one,
		specsPath:       specPath.Child("pytorchReplicaSpecs"),
		required: func(obj client.Object) []string {
			if obj.(*kftraining.PyTorchJob).Spec.ElasticPolicy != nil {
				return nil
			}
			return []string{string(kftraining.PyTorchJobReplicaTypeMaster)}
		},
		single: []string{string(kftraining.PyTorchJobReplicaTypeMaster)},
	},
	specs: func(j *kftraining.PyTorchJob) map[kftraining.ReplicaType]*kftraining.ReplicaSpec {
		return j.Spec.PyTorchReplicaSpecs
	},
	runPolicy: func(j *kftraining.PyTorchJob) *kftraining.RunPolicy { return &j.Spec.RunPolicy },
	status:    func(j *kftraining.PyTorchJob) *kftraining.JobStatus { return &j.Status },
}
