package batchjob

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch,resources=jobs,verbs=create,versions=v1,name=mjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-batch-v1-job,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch,resources=jobs,verbs=create;update,versions=v1,name=vjob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get
// +kubebuilder:rbac:groups=batch,resources=jobs/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch

// Integration registers batch/v1 Jobs.
var Integration = jobframework.Integration{
	Name:         "batch/job",
	GVK:          GVK,
	NewJob:       New,
	SetupWebhook: setupWebhook,
	Elastic:      true,
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	in := jobframework.Integration{Name: "batch/job", GVK: GVK, NewJob: New, Elastic: true}
	w := &jobframework.Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, Integration: in, Options: opts,
		Validate: validate, Mutate: func(job jobframework.Job) { gateElastic(job, opts) }}
	return jobframework.SetupWebhook(mgr, &batchv1.Job{}, w)
}

// gateElastic holds the pods of an elastic Job (kueue.ElasticJobAnnotation)
// with kueue.ElasticJobSchedulingGate: the job reconciler lets them go as
// its admitted Workload slice allows.
func gateElastic(job jobframework.Job, opts jobframework.Options) {
	j := job.(*Job).job
	if !opts.ElasticJobs || !jobframework.IsElastic(j) {
		return
	}
	j.Spec.Template.Spec.SchedulingGates = jobframework.AppendGates(j.Spec.Template.Spec.SchedulingGates,
		corev1.PodSchedulingGate{Name: kueue.ElasticJobSchedulingGate})
}

var annotationsPath = field.NewPath("metadata", "annotations")

// validate checks the partial admission annotation (a whole number between
// 1 and the Job's parallelism, fixed while the Job runs, as is the
// parallelism it applies to) and the elastic-job annotation (never with
// partial admission; jobframework keeps it fixed).
func validate(old, job jobframework.Job) field.ErrorList {
	j := job.(*Job).job
	var errs field.ErrorList
	if v, ok := j.Annotations[MinParallelismAnnotation]; ok {
		path := annotationsPath.Key(MinParallelismAnnotation)
		n, err := strconv.ParseInt(v, 10, 32)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path, v, "must be an integer"))
		case n < 1 || int32(n) > ptr.Deref(j.Spec.Parallelism, 1):
			errs = append(errs, field.Invalid(path, v, "must be between 1 and spec.parallelism"))
		}
	}
	if _, partial := j.Annotations[MinParallelismAnnotation]; partial && jobframework.IsElastic(j) {
		errs = append(errs, field.Forbidden(annotationsPath.Key(MinParallelismAnnotation),
			"cannot be used by an elastic job ("+kueue.ElasticJobAnnotation+")"))
	}
	if old == nil {
		return errs
	}
	o := old.(*Job).job
	running := !old.IsSuspended() && !job.IsSuspended()
	if running && o.Annotations[MinParallelismAnnotation] != j.Annotations[MinParallelismAnnotation] {
		errs = append(errs, field.Forbidden(annotationsPath.Key(MinParallelismAnnotation), "cannot change while the job runs"))
	}
	if _, partial := j.Annotations[MinParallelismAnnotation]; partial && running &&
		ptr.Deref(o.Spec.Parallelism, 1) != ptr.Deref(j.Spec.Parallelism, 1) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "parallelism"), "cannot change while the job runs with partial admission ("+MinParallelismAnnotation+")"))
	}
	return errs
}
