package kubeflow

import (
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-paddlejob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=paddlejobs,verbs=create,versions=v1,name=mpaddlejob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-paddlejob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=paddlejobs,verbs=create;update,versions=v1,name=vpaddlejob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kubeflow.org,resources=paddlejobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=paddlejobs/status,verbs=get
// +kubebuilder:rbac:groups=kubeflow.org,resources=paddlejobs/finalizers,verbs=get;update;patch

// PaddleJobIntegration registers kubeflow.org/v1 PaddleJobs: PodSets
// master and worker (collective jobs have workers only).
var PaddleJobIntegration = paddleJob.integration()

var paddleJob = &v1Kind[kftraining.PaddleJob, *kftraining.PaddleJob]{
	name: "kubeflow.org/paddlejob",
	gvk:  kftraining.GroupVersion.WithKind(kftraining.PaddleJobKind),
	info: kindInfo{
		order:           []string{string(kftraining.PaddleJobReplicaTypeMaster), string(kftraining.PaddleJobReplicaTypeWorker)},
		defaultReplicas: one,
		specsPath:       specPath.Child("paddleReplicaSpecs"),
	},
	specs: func(j *kftraining.PaddleJob) map[kftraining.ReplicaType]*kftraining.ReplicaSpec {
		return j.Spec.PaddleReplicaSpecs
	},
	runPolicy: func(j *kftraining.PaddleJob) *kftraining.RunPolicy { return &j.Spec.RunPolicy },
	status:    func(j *kftraining.PaddleJob) *kftraining.JobStatus { return &j.Status },
}
