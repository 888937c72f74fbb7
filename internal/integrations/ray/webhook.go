package ray

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-ray-io-v1-rayjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayjobs,verbs=create,versions=v1,name=mrayjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-rayjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayjobs,verbs=create;update,versions=v1,name=vrayjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-ray-io-v1-raycluster,mutating=true,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayclusters,verbs=create,versions=v1,name=mraycluster.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-raycluster,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayclusters,verbs=create;update,versions=v1,name=vraycluster.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-ray-io-v1-rayservice,mutating=true,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayservices,verbs=create,versions=v1,name=mrayservice.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-rayservice,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayservices,verbs=create;update,versions=v1,name=vrayservice.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=ray.io,resources=rayjobs;rayclusters;rayservices,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/status;rayclusters/status;rayservices/status,verbs=get
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/finalizers;rayclusters/finalizers;rayservices/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch

// Framework names.
const (
	RayJobFramework     = "ray.io/rayjob"
	RayClusterFramework = "ray.io/raycluster"
	RayServiceFramework = "ray.io/rayservice"
)

// RayJobIntegration registers ray.io/v1 RayJobs: PodSets head, one per
// worker group, and submitter in K8sJobMode. An elastic RayJob's cluster
// may autoscale (rayjob_elastic.go).
var RayJobIntegration = jobframework.Integration{
	Name: RayJobFramework, GVK: RayJobGVK, NewJob: NewRayJob, AddToScheme: rayv1.AddToScheme,
	SetupWebhook: func(mgr ctrl.Manager, opts jobframework.Options) error {
		in := jobframework.Integration{Name: RayJobFramework, GVK: RayJobGVK, NewJob: NewRayJob, Elastic: true}
		return setupWebhook(mgr, opts, in, &rayv1.RayJob{}, validateRayJob)
	},
	Elastic: true,
}

// RayClusterIntegration registers ray.io/v1 RayClusters: PodSets head and
// one per worker group. The clusters of RayJobs and RayServices are left
// to their owners.
var RayClusterIntegration = jobframework.Integration{
	Name: RayClusterFramework, GVK: RayClusterGVK, NewJob: NewRayCluster, AddToScheme: rayv1.AddToScheme,
	SetupWebhook: func(mgr ctrl.Manager, opts jobframework.Options) error {
		in := jobframework.Integration{Name: RayClusterFramework, GVK: RayClusterGVK, NewJob: NewRayCluster, Elastic: true}
		return setupWebhook(mgr, opts, in, &rayv1.RayCluster{}, validateRayCluster)
	},
	Elastic: true,
}

// RayServiceIntegration registers ray.io/v1 RayServices: PodSets head and
// one per worker group of spec.rayClusterConfig.
var RayServiceIntegration = jobframework.Integration{
	Name: RayServiceFramework, GVK: RayServiceGVK, NewJob: NewRayService, AddToScheme: rayv1.AddToScheme,
	SetupWebhook: func(mgr ctrl.Manager, opts jobframework.Options) error {
		return setupWebhook(mgr, opts, jobframework.Integration{Name: RayServiceFramework, GVK: RayServiceGVK, NewJob: NewRayService}, &rayv1.RayService{}, validateRayService)
	},
}

// setupWebhook registers the webhooks of one kind. The kind's own checks
// apply to the objects Kuota queues; objects a RayJob or RayService owns
// are let through unchanged.
func setupWebhook[T client.Object](mgr ctrl.Manager, opts jobframework.Options, in jobframework.Integration, obj T, check checkFunc) error {
	h := newWebhook[T](jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, opts, in, check)
	return ctrl.NewWebhookManagedBy(mgr, obj).WithDefaulter(h).WithValidator(h).Complete()
}

// checkFunc is a kind's own validation of a queued object.
type checkFunc func(jobframework.Job, jobframework.Options) field.ErrorList

// newWebhook builds the webhooks of one kind; an elastic kind's objects
// that opt in get their pods gated.
func newWebhook[T client.Object](c client.Reader, opts jobframework.Options, in jobframework.Integration, check checkFunc) webhook[T] {
	w := &jobframework.Webhook{Client: c, Integration: in, Options: opts, Validate: validator(opts, check)}
	if in.Elastic {
		w.Mutate = func(job jobframework.Job) { gateElastic(job, opts) }
	}
	return webhook[T]{w: w, opts: opts}
}

// validator runs check on the jobs Kuota queues.
func validator(opts jobframework.Options, check checkFunc) func(old, job jobframework.Job) field.ErrorList {
	return func(_, job jobframework.Job) field.ErrorList {
		if jobframework.QueueName(job.Object()) == "" && !opts.ManageJobsWithoutQueueName {
			return nil
		}
		return check(job, opts)
	}
}

// webhook adapts jobframework.Webhook to controller-runtime's typed
// interfaces, skipping the clusters a RayJob or RayService owns.
type webhook[T client.Object] struct {
	w    *jobframework.Webhook
	opts jobframework.Options
}

func (h webhook[T]) Default(ctx context.Context, obj T) error {
	if h.opts.ControlledByQueuedKind(obj) {
		return nil
	}
	return h.w.Default(ctx, obj)
}

func (h webhook[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	if h.opts.ControlledByQueuedKind(obj) {
		return nil, nil
	}
	return nil, h.w.ValidateCreate(ctx, obj)
}

func (h webhook[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	if h.opts.ControlledByQueuedKind(newObj) {
		return nil, nil
	}
	return nil, h.w.ValidateUpdate(ctx, oldObj, newObj)
}

func (h webhook[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) { return nil, nil }

var specPath = field.NewPath("spec")

// validateRayJob checks a queued RayJob: it brings its own cluster
// (spec.rayClusterSpec set, no spec.clusterSelector), which is deleted
// when the job ends (spec.shutdownAfterJobFinishes), and the cluster can
// be described as PodSets.
func validateRayJob(job jobframework.Job, opts jobframework.Options) field.ErrorList {
	j := job.(*RayJob).job
	var errs field.ErrorList
	if len(j.Spec.ClusterSelector) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("clusterSelector"), "a RayJob queued by Kuota cannot use an existing cluster"))
	}
	if !j.Spec.ShutdownAfterJobFinishes {
		errs = append(errs, field.Invalid(specPath.Child("shutdownAfterJobFinishes"), false, "must be true: the cluster holds the job's quota until it is deleted"))
	}
	if j.Spec.RayClusterSpec == nil {
		return append(errs, field.Required(specPath.Child("rayClusterSpec"), "a RayJob queued by Kuota brings its own cluster"))
	}
	extra := 0
	if (&RayJob{job: j}).submitterPod() {
		extra = 1
	}
	elastic := opts.ElasticJobs && jobframework.IsElastic(j)
	return append(errs, validateCluster(j.Spec.RayClusterSpec, specPath.Child("rayClusterSpec"), extra, elastic)...)
}

// validateRayCluster checks a queued RayCluster's spec. An elastic one
// (kueue.ElasticJobAnnotation, with the feature on) may autoscale: its
// Workload follows the worker groups' replicas (docs/design/elastic.md).
func validateRayCluster(job jobframework.Job, opts jobframework.Options) field.ErrorList {
	c := job.(*RayCluster).cluster
	return validateCluster(&c.Spec, specPath, 0, opts.ElasticJobs && jobframework.IsElastic(c))
}

// gateElastic holds the cluster pods of an elastic RayCluster or RayJob
// with the elastic gate: the job reconciler lets them go as its admitted
// Workload slice allows. A RayJob's submitter is not gated (it is not one
// of the cluster's pods).
func gateElastic(job jobframework.Job, opts jobframework.Options) {
	if !opts.ElasticJobs || !jobframework.IsElastic(job.Object()) {
		return
	}
	var spec *rayv1.RayClusterSpec
	switch j := job.(type) {
	case *RayCluster:
		spec = &j.cluster.Spec
	case *RayJob:
		spec = j.job.Spec.RayClusterSpec
	}
	if spec == nil {
		return
	}
	for _, t := range clusterTemplates(spec) {
		t.template.Spec.SchedulingGates = jobframework.AppendGates(t.template.Spec.SchedulingGates,
			corev1.PodSchedulingGate{Name: kueue.ElasticJobSchedulingGate})
	}
}

// validateRayService checks a queued RayService's spec.rayClusterConfig.
func validateRayService(job jobframework.Job, _ jobframework.Options) field.ErrorList {
	return validateCluster(&job.(*RayService).svc.Spec.RayClusterSpec, specPath.Child("rayClusterConfig"), 0, false)
}
