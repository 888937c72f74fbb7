package spark

import (
	"fmt"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication,mutating=true,failurePolicy=fail,sideEffects=None,groups=sparkoperator.k8s.io,resources=sparkapplications,verbs=create,versions=v1beta2,name=msparkapplication.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-sparkoperator-k8s-io-v1beta2-sparkapplication,mutating=false,failurePolicy=fail,sideEffects=None,groups=sparkoperator.k8s.io,resources=sparkapplications,verbs=create;update,versions=v1beta2,name=vsparkapplication.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkapplications,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkapplications/status,verbs=get
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkapplications/finalizers,verbs=get;update;patch

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &jobframework.Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()},
		Integration: jobframework.Integration{Name: FrameworkName, GVK: GVK, NewJob: New}, Options: opts, Validate: Validate}
	return jobframework.SetupWebhook(mgr, &sparkv1beta2.SparkApplication{}, w)
}

// Validate checks a queued SparkApplication (one with a queue name): it
// does not use Spark's dynamic allocation, its driver and executors can be
// sized (memory strings, cores, overhead factors...), and while it runs
// (it was and stays unsuspended) the executors' count and the pods'
// requests stay those its Workload was admitted with. old is nil on
// create.
func Validate(old, job jobframework.Job) field.ErrorList {
	app := job.(*Application).app
	if jobframework.QueueName(app) == "" {
		return nil
	}
	var errs field.ErrorList
	if p := dynamicAllocation(app); p != nil {
		errs = append(errs, field.Forbidden(p, "Spark's dynamic allocation is not supported for a queued SparkApplication: its executors' count must be known before admission; set spec.executor.instances instead"))
	}
	_, countErrs := executorCount(app)
	errs = append(errs, countErrs...)
	for _, r := range []*role{driverRole, executorRole} {
		_, tErrs := podTemplate(app, r)
		errs = append(errs, tErrs...)
	}
	if len(errs) > 0 || old == nil || old.IsSuspended() || job.IsSuspended() {
		return errs
	}
	return validateRunning(old.(*Application).app, app)
}

// validateRunning forbids changing what the admission counted while the
// application runs.
func validateRunning(old, app *sparkv1beta2.SparkApplication) field.ErrorList {
	const why = "cannot change while the SparkApplication runs: its Workload was admitted for the old value; suspend it first"
	var errs field.ErrorList
	oldN, _ := executorCount(old)
	newN, _ := executorCount(app)
	if oldN != newN {
		errs = append(errs, field.Forbidden(instancesPath, fmt.Sprintf("%s (was %d, now %d)", why, oldN, newN)))
	}
	for _, r := range []*role{driverRole, executorRole} {
		o, _ := podTemplate(old, r)
		n, _ := podTemplate(app, r)
		if o == nil || n == nil {
			continue
		}
		if !sameRequests(o.Spec.Containers, n.Spec.Containers) || !sameRequests(o.Spec.InitContainers, n.Spec.InitContainers) {
			errs = append(errs, field.Forbidden(r.path, why+" (the pods' resource requests changed)"))
		}
	}
	return errs
}

// sameRequests compares the containers' requests and limits.
func sameRequests(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equality.Semantic.DeepEqual(a[i].Resources, b[i].Resources) {
			return false
		}
	}
	return true
}
