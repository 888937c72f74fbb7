package ray

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// RayJobGVK is the RayJob kind.
var RayJobGVK = rayv1.GroupVersion.WithKind("RayJob")

// RayJob wraps a RayJob. The Ray operator creates the job's RayCluster
// from spec.rayClusterSpec once spec.suspend is false, and deletes it (and
// the submitter Job) when spec.suspend is set again.
type RayJob struct {
	job *rayv1.RayJob
	// live are the worker counts of the cluster of an autoscaling elastic
	// job, when read (rayjob_elastic.go).
	live map[kueue.PodSetReference]int32
}

var _ jobframework.Job = (*RayJob)(nil)

// NewRayJob wraps obj, which must be a *rayv1.RayJob (a new one when nil).
func NewRayJob(obj client.Object) jobframework.Job {
	if obj == nil {
		return &RayJob{job: &rayv1.RayJob{}}
	}
	return &RayJob{job: obj.(*rayv1.RayJob)}
}

// Object returns the RayJob.
func (j *RayJob) Object() client.Object { return j.job }

// IsSuspended reports spec.suspend.
func (j *RayJob) IsSuspended() bool { return j.job.Spec.Suspend }

// Suspend sets spec.suspend.
func (j *RayJob) Suspend() { j.job.Spec.Suspend = true }

// submitterPod reports whether the job is submitted from a pod of its
// own: submissionMode K8sJobMode, the CRD's default.
func (j *RayJob) submitterPod() bool {
	m := j.job.Spec.SubmissionMode
	return m == rayv1.K8sJobMode || m == ""
}

// templates lists the job's PodSets in order, with the submitter's
// template: spec.submitterPodTemplate, or the one the Ray operator would
// use when it is unset.
func (j *RayJob) templates() ([]podTemplate, error) {
	spec := j.job.Spec.RayClusterSpec
	if spec == nil {
		return nil, fmt.Errorf("spec.rayClusterSpec: required (a RayJob queued by Kuota brings its own cluster)")
	}
	out := clusterTemplates(spec)
	if j.submitterPod() {
		t := j.job.Spec.SubmitterPodTemplate
		if t == nil {
			t = defaultSubmitter(spec)
		}
		out = append(out, podTemplate{name: SubmitterPodSet, count: 1, template: t})
	}
	return out, nil
}

// defaultSubmitter is the submitter pod the Ray operator creates when
// spec.submitterPodTemplate is unset: one container with the head's image
// requesting 500m CPU and 200Mi of memory (limits 1 CPU, 1Gi). Only its
// resources matter here: they are what the submitter's quota is.
func defaultSubmitter(spec *rayv1.RayClusterSpec) *corev1.PodTemplateSpec {
	image := ""
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 {
		image = cs[0].Image
	}
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:  "ray-job-submitter",
			Image: image,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("200Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			},
		}},
	}}
}

// PodSets returns head (with the autoscaler of an autoscaling cluster),
// the worker groups (as many workers as the live cluster of an
// autoscaling elastic job has), and submitter in K8sJobMode.
func (j *RayJob) PodSets() ([]kueue.PodSet, error) {
	ts, err := j.templates()
	if err != nil {
		return nil, err
	}
	out, err := clusterPodSets(j.job.Spec.RayClusterSpec, ts)
	if err != nil {
		return nil, err
	}
	j.liveCounts(out)
	return out, nil
}

// RunWithPodSetsInfo puts the admission into the head's, the worker
// groups' and the submitter's pod templates and lifts spec.suspend. The
// submitter's admission reaches its pod only through
// spec.submitterPodTemplate: a job without one gets the operator's default
// submitter written there, with the admission (its flavor's node selector
// and tolerations), as Kueue does. Otherwise the operator's default pod
// would land on any node, outside the flavor its quota was counted in.
func (j *RayJob) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	ts, err := j.templates()
	if err != nil {
		return err
	}
	if err := applyAdmission(ts, infos); err != nil {
		return err
	}
	if j.submitterPod() && j.job.Spec.SubmitterPodTemplate == nil {
		j.job.Spec.SubmitterPodTemplate = ts[len(ts)-1].template
	}
	j.job.Spec.Suspend = false
	return nil
}

// RestorePodSetsInfo puts the pod templates back as the Workload recorded
// them.
func (j *RayJob) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	ts, err := j.templates()
	if err != nil {
		return false
	}
	return restore(ts, infos)
}

// Finished reports a job whose deployment is Complete or Failed; it
// succeeded when its Ray job did.
func (j *RayJob) Finished() (string, bool, bool) {
	st := j.job.Status
	switch st.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
	default:
		return "", false, false
	}
	success := st.JobStatus == rayv1.JobStatusSucceeded
	msg := st.Message
	if msg == "" {
		msg = fmt.Sprintf("RayJob %s (job status %s)", st.JobDeploymentStatus, st.JobStatus)
	}
	return msg, success, true
}

// IsActive reports a deployment still in progress: the operator has not
// yet torn the cluster down (Suspended) or never started it.
func (j *RayJob) IsActive() bool {
	switch j.job.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusSuspended,
		rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
		return false
	}
	return true
}

// PodsReady reports the job's cluster as ready.
func (j *RayJob) PodsReady() bool { return j.job.Status.RayClusterStatus.State == rayv1.Ready }
