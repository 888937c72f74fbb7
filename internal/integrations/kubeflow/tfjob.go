package kubeflow

import (
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-tfjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=tfjobs,verbs=create,versions=v1,name=mtfjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-tfjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=tfjobs,verbs=create;update,versions=v1,name=vtfjob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs/status,verbs=get
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs/finalizers,verbs=get;update;patch

// TFJobIntegration registers kubeflow.org/v1 TFJobs: PodSets chief,
// master, ps, worker and evaluator, those the job has.
var TFJobIntegration = tfJob.integration()

var tfJob = &v1Kind[kftraining.TFJob, *kftraining.TFJob]{
	name: "kubeflow.org/tfjob",
	gvk:  kftraining.GroupVersion.WithKind(kftraining.TFJobKind),
	info: kindInfo{
		order: []string{string(kftraining.TFJobReplicaTypeChief), string(kftraining.TFJobReplicaTypeMaster),
			string(kftraining.TFJobReplicaTypePS), string(kftraining.TFJobReplicaTypeWorker), string(kftraining.TFJobReplicaTypeEval)},
		defaultReplicas: one,
		specsPath:       specPath.Child("tfReplicaSpecs"),
	},
	specs: func(j *kftraining.TFJob) map[kftraining.ReplicaType]*kftraining.ReplicaSpec {
		return j.Spec.TFReplicaSpecs
	},
	runPolicy: func(j *kftraining.TFJob) *kftraining.RunPolicy { return &j.Spec.RunPolicy },
	status:    func(j *kftraining.TFJob) *kftraining.JobStatus { return &j.Status },
}
