package kubeflow

import (
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-jaxjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=jaxjobs,verbs=create,versions=v1,name=mjaxjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-jaxjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=jaxjobs,verbs=create;update,versions=v1,name=vjaxjob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kubeflow.org,resources=jaxjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=jaxjobs/status,verbs=get
// +kubebuilder:rbac:groups=kubeflow.org,resources=jaxjobs/finalizers,verbs=get;update;patch

// JAXJobIntegration registers kubeflow.org/v1 JAXJobs: one PodSet worker.
var JAXJobIntegration = jaxJob.integration()

var jaxJob = &v1Kind[kftraining.JAXJob, *kftraining.JAXJob]{
	name: "kubeflow.org/jaxjob",
	gvk:  kftraining.GroupVersion.WithKind(kftraining.JAXJobKind),
	info: kindInfo{
		order:           []string{string(kftraining.JAXJobReplicaTypeWorker)},
		defaultReplicas: one,
		specsPath:       specPath.Child("jaxReplicaSpecs"),
	},
	specs: func(j *kftraining.JAXJob) map[kftraining.ReplicaType]*kftraining.ReplicaSpec {
		return j.Spec.JAXReplicaSpecs
	},
	runPolicy: func(j *kftraining.JAXJob) *kftraining.RunPolicy { return &j.Spec.RunPolicy },
	status:    func(j *kftraining.JAXJob) *kftraining.JobStatus { return &j.Status },
}
