package jobset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-jobset-x-k8s-io-v1alpha2-jobset,mutating=true,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create,versions=v1alpha2,name=mjobset.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-jobset-x-k8s-io-v1alpha2-jobset,mutating=false,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create;update,versions=v1alpha2,name=vjobset.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=get
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/finalizers,verbs=get;update;patch

// Integration registers JobSets.
var Integration = jobframework.Integration{
	Name:         FrameworkName,
	GVK:          GVK,
	NewJob:       New,
	AddToScheme:  jobsetapi.AddToScheme,
	SetupWebhook: setupWebhook,
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &jobframework.Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()},
		Integration: jobframework.Integration{Name: FrameworkName, GVK: GVK, NewJob: New}, Options: opts, Validate: Validate}
	return jobframework.SetupWebhook(mgr, &jobsetapi.JobSet{}, w)
}

// MaxReplicatedJobs is the most replicated jobs a queued JobSet may have:
// a Workload holds at most 18 PodSets.
const MaxReplicatedJobs = 18

var replicatedJobsPath = field.NewPath("spec", "replicatedJobs")

// Validate checks a queued JobSet (one with a queue name): it has between
// 1 and MaxReplicatedJobs replicated jobs, and while it runs (it was and
// stays unsuspended) its replicated jobs keep the names, replicas, pod
// counts and resource requests its Workload was admitted with. old is nil
// on create.
func Validate(old, job jobframework.Job) field.ErrorList {
	js := job.(*JobSet).js
	if jobframework.QueueName(js) == "" {
		return nil
	}
	var errs field.ErrorList
	switch n := len(js.Spec.ReplicatedJobs); {
	case n == 0:
		errs = append(errs, field.Required(replicatedJobsPath, "a queued JobSet needs at least one replicated job"))
	case n > MaxReplicatedJobs:
		errs = append(errs, field.TooMany(replicatedJobsPath, n, MaxReplicatedJobs))
	}
	if old == nil || old.IsSuspended() || job.IsSuspended() {
		return errs
	}
	return append(errs, validateRunning(old.(*JobSet).js, js)...)
}

// validateRunning forbids changing what the admission counted while the
// JobSet runs.
func validateRunning(old, js *jobsetapi.JobSet) field.ErrorList {
	const why = "cannot change while the JobSet runs: its Workload was admitted for the old value; suspend the JobSet first"
	if len(old.Spec.ReplicatedJobs) != len(js.Spec.ReplicatedJobs) {
		return field.ErrorList{field.Forbidden(replicatedJobsPath,
			fmt.Sprintf("replicated jobs cannot be added or removed while the JobSet runs (had %d, now %d)",
				len(old.Spec.ReplicatedJobs), len(js.Spec.ReplicatedJobs)))}
	}
	var errs field.ErrorList
	for i := range js.Spec.ReplicatedJobs {
		o, n := &old.Spec.ReplicatedJobs[i], &js.Spec.ReplicatedJobs[i]
		path := replicatedJobsPath.Index(i)
		if o.Name != n.Name {
			errs = append(errs, field.Forbidden(path.Child("name"), fmt.Sprintf("%s (was %q, now %q)", why, o.Name, n.Name)))
			continue
		}
		if o.Replicas != n.Replicas {
			errs = append(errs, field.Forbidden(path.Child("replicas"), fmt.Sprintf("%s (was %d, now %d)", why, o.Replicas, n.Replicas)))
		}
		if PodsPerReplica(o) != PodsPerReplica(n) {
			errs = append(errs, field.Forbidden(path.Child("template", "spec", "parallelism"),
				fmt.Sprintf("%s (pods per replica was %d, now %d)", why, PodsPerReplica(o), PodsPerReplica(n))))
		}
		if !sameRequests(o, n) {
			errs = append(errs, field.Forbidden(path.Child("template", "spec", "template", "spec", "containers"),
				why+" (the containers' resources changed)"))
		}
	}
	return errs
}

// sameRequests reports whether two replicated jobs' pods ask for the same
// resources.
func sameRequests(a, b *jobsetapi.ReplicatedJob) bool {
	sa, sb := &a.Template.Spec.Template.Spec, &b.Template.Spec.Template.Spec
	if len(sa.Containers) != len(sb.Containers) || len(sa.InitContainers) != len(sb.InitContainers) {
		return false
	}
	for i := range sa.Containers {
		if !equality.Semantic.DeepEqual(sa.Containers[i].Resources, sb.Containers[i].Resources) {
			return false
		}
	}
	for i := range sa.InitContainers {
		if !equality.Semantic.DeepEqual(sa.InitContainers[i].Resources, sb.InitContainers[i].Resources) {
			return false
		}
	}
	return equality.Semantic.DeepEqual(sa.Overhead, sb.Overhead)
}
