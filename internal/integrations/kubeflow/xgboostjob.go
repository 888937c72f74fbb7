package kubeflow

import (
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-xgboostjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=xgboostjobs,verbs=create,versions=v1,name=mxgboostjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-xgboostjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=xgboostjobs,verbs=create;update,versions=v1,name=vxgboostjob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kubeflow.org,resources=xgboostjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=xgboostjobs/status,verbs=get
// +kubebuilder:rbac:groups=kubeflow.org,resources=xgboostjobs/finalizers,verbs=get;update;patch

// XGBoostJobIntegration registers kubeflow.org/v1 XGBoostJobs: PodSets
// master (required, one pod) and worker.
var XGBoostJobIntegration = xgboostJob.integration()

var xgboostJob = &v1Kind[kftraining.XGBoostJob, *kftraining.XGBoostJob]{
	name: "kubeflow.org/xgboostjob",
	gvk:  kftraining.GroupVersion.WithKind(kftraining.XGBoostJobKind),
	info: kindInfo{
		order:           []string{string(kftraining.XGBoostJobReplicaTypeMaster), string(kftraining.XGBoostJobReplicaTypeWorker)},
		defaultReplicas: one,
		specsPath:       specPath.Child("xgbReplicaSpecs"),
		required:        func(client.Object) []string { return []string{string(kftraining.XGBoostJobReplicaTypeMaster)} },
		single:          []string{string(kftraining.XGBoostJobReplicaTypeMaster)},
	},
	specs: func(j *kftraining.XGBoostJob) map[kftraining.ReplicaType]*kftraining.ReplicaSpec {
		return j.Spec.XGBReplicaSpecs
	},
	runPolicy: func(j *kftraining.XGBoostJob) *kftraining.RunPolicy { return &j.Spec.RunPolicy },
	status:    func(j *kftraining.XGBoostJob) *kftraining.JobStatus { return &j.Status },
}
