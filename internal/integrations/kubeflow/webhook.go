package kubeflow

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch

// setupWebhook registers the mutating and validating webhooks of one kind
// of objects like obj.
func setupWebhook[T client.Object](mgr ctrl.Manager, opts jobframework.Options, in jobframework.Integration, obj T) error {
	w := &jobframework.Webhook{
		Client:      jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()},
		Integration: in, Options: opts, Validate: validator(opts),
	}
	return jobframework.SetupWebhook(mgr, obj, w)
}

// validator checks, for the jobs Kuota queues, that their replica specs
// can be described as PodSets.
func validator(opts jobframework.Options) func(old, job jobframework.Job) field.ErrorList {
	return func(_, job jobframework.Job) field.ErrorList {
		obj := job.Object()
		if jobframework.QueueName(obj) == "" && !opts.ManageJobsWithoutQueueName {
			return nil
		}
		return job.(*Job).validate()
	}
}

// validate checks the replica specs: at least one, each of a replica type
// the kind knows and set, no negative count, the kind's required replica
// types present, and a count of 1 where the kind allows only one pod.
func (j *Job) validate() field.ErrorList {
	k := j.src.kind()
	reps := j.src.replicas()
	slices.SortFunc(reps, func(a, b replica) int {
		if c := cmp.Compare(slices.Index(k.order, a.typ), slices.Index(k.order, b.typ)); c != 0 {
			return c
		}
		return cmp.Compare(a.typ, b.typ)
	})
	var errs field.ErrorList
	if len(reps) == 0 {
		errs = append(errs, field.Required(k.specsPath, "at least one replica type must be set"))
	}
	has := map[string]bool{}
	for _, r := range reps {
		path := k.specsPath.Key(r.typ)
		has[r.typ] = true
		switch {
		case !knownType(k, r.typ):
			errs = append(errs, field.NotSupported(path, r.typ, k.order))
			continue
		case r.template == nil:
			errs = append(errs, field.Required(path, "the replica spec must be set"))
			continue
		case r.replicas != nil && *r.replicas < 0:
			errs = append(errs, field.Invalid(path.Child("replicas"), *r.replicas, "must not be negative"))
		}
		if slices.Contains(k.single, r.typ) && j.count(r) != 1 {
			errs = append(errs, field.Invalid(path.Child("replicas"), j.count(r), "must be 1"))
		}
	}
	if k.required != nil {
		for _, typ := range k.required(j.src.object()) {
			if !has[typ] {
				errs = append(errs, field.Required(k.specsPath.Key(typ), "a "+typ+" replica spec is required"))
			}
		}
	}
	return errs
}
