package jobframework

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Webhook is the defaulting and validating webhook of one job kind: the
// steps all kinds share, then the kind's own checks.
type Webhook struct {
	Client      client.Reader
	Integration Integration
	Options     Options
	// Validate, when set, adds the kind's own checks; old is nil on create.
	Validate func(old, job Job) field.ErrorList
	// Mutate, when set, completes a managed job after the shared
	// defaulting (for instance the elastic gate of its pod template).
	Mutate func(job Job)
}

var labelsPath = field.NewPath("metadata", "labels")

// Default sends a job without a queue name to the namespace's "default"
// LocalQueue when there is one, and suspends every managed job, so that
// nothing runs before it is admitted. A job a queued parent controls is
// left alone.
func (w *Webhook) Default(ctx context.Context, obj client.Object) error {
	if w.Options.ControlledByQueuedKind(obj) {
		return nil
	}
	if QueueName(obj) == "" {
		selected, err := w.Options.namespaceSelected(ctx, w.Client, obj.GetNamespace())
		if err != nil {
			return err
		}
		if selected && w.defaultQueueExists(ctx, obj.GetNamespace()) {
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[QueueNameLabel] = DefaultLocalQueueName
			obj.SetLabels(labels)
		}
	}
	managed, err := w.Options.Managed(ctx, w.Client, obj)
	if err != nil || !managed {
		return err
	}
	job := w.Integration.NewJob(obj)
	job.Suspend()
	if w.Mutate != nil {
		w.Mutate(job)
	}
	return w.defaultManagedBy(ctx, job)
}

// defaultManagedBy hands a job of a kind MultiKueue can run to MultiKueue
// (spec.managedBy) when its LocalQueue's ClusterQueue has a MultiKueue
// check, so that the kind's own controller does not run it here.
func (w *Webhook) defaultManagedBy(ctx context.Context, job Job) error {
	j, ok := job.(JobWithRemote)
	if !ok || j.ManagedBy() != nil || QueueName(job.Object()) == "" {
		return nil
	}
	obj := job.Object()
	var lq kueue.LocalQueue
	if err := w.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: QueueName(obj)}, &lq); err != nil {
		return client.IgnoreNotFound(err)
	}
	var cq kueue.ClusterQueue
	if err := w.Client.Get(ctx, types.NamespacedName{Name: string(lq.Spec.ClusterQueue)}, &cq); err != nil {
		return client.IgnoreNotFound(err)
	}
	for _, name := range ClusterQueueChecks(&cq) {
		var ac kueue.AdmissionCheck
		if err := w.Client.Get(ctx, types.NamespacedName{Name: string(name)}, &ac); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if ac.Spec.ControllerName == MultiKueueManagedBy {
			j.SetManagedBy(ptr.To(MultiKueueManagedBy))
			return nil
		}
	}
	return nil
}

// ClusterQueueChecks lists the names of a ClusterQueue's admission checks.
func ClusterQueueChecks(cq *kueue.ClusterQueue) []kueue.AdmissionCheckReference {
	var out []kueue.AdmissionCheckReference
	if s := cq.Spec.AdmissionChecksStrategy; s != nil {
		for _, r := range s.AdmissionChecks {
			out = append(out, r.Name)
		}
	}
	return out
}

func (w *Webhook) defaultQueueExists(ctx context.Context, ns string) bool {
	var lq kueue.LocalQueue
	return w.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: DefaultLocalQueueName}, &lq) == nil
}

// ValidateCreate checks a new job's Kuota labels and the topology
// annotations of its pod templates, and refuses a managed job created
// running on a prebuilt Workload unless that Workload is admitted for it
// (the defaulting suspends managed jobs; this holds should a request get
// past it).
func (w *Webhook) ValidateCreate(ctx context.Context, obj client.Object) error {
	errs := ValidateLabels(obj)
	job := w.Integration.NewJob(obj)
	if !job.IsSuspended() && obj.GetLabels()[PrebuiltWorkloadLabel] != "" {
		managed, err := w.Options.Managed(ctx, w.Client, obj)
		if err != nil {
			return err
		}
		if managed {
			errs = append(errs, w.checkAdmitted(ctx, obj, suspendField(job))...)
		}
	}
	errs = append(errs, validateTopology(nil, job)...)
	if w.Validate != nil {
		errs = append(errs, w.Validate(nil, job)...)
	}
	return w.result(obj, errs)
}

// ValidateUpdate checks a job change: labels stay valid, the queue name
// and priority class follow their rules, changed topology annotations are
// valid, the elastic opt-in of a kind that has it is fixed, and a user
// cannot start a job whose Workload is not admitted.
func (w *Webhook) ValidateUpdate(ctx context.Context, oldObj, newObj client.Object) error {
	oldJob, newJob := w.Integration.NewJob(oldObj), w.Integration.NewJob(newObj)
	errs := ValidateLabels(newObj)
	errs = append(errs, ValidateLabelChanges(oldObj, newObj, oldJob.IsSuspended(), newJob.IsSuspended())...)
	if oldJob.IsSuspended() && !newJob.IsSuspended() {
		managed, err := w.Options.Managed(ctx, w.Client, newObj)
		if err != nil {
			return err
		}
		if managed {
			errs = append(errs, w.checkAdmitted(ctx, newObj, suspendField(newJob))...)
		}
	}
	errs = append(errs, validateTopology(oldJob, newJob)...)
	if w.Integration.Elastic && oldObj.GetAnnotations()[kueue.ElasticJobAnnotation] != newObj.GetAnnotations()[kueue.ElasticJobAnnotation] {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(kueue.ElasticJobAnnotation),
			"cannot be added, changed or removed after the job is created"))
	}
	if w.Validate != nil {
		errs = append(errs, w.Validate(oldJob, newJob)...)
	}
	return w.result(newObj, errs)
}

// checkAdmitted refuses to lift the suspension of a job whose Workload is
// not admitted: only an admission may start a managed job.
func (w *Webhook) checkAdmitted(ctx context.Context, obj client.Object, suspend *field.Path) field.ErrorList {
	name := obj.GetLabels()[PrebuiltWorkloadLabel]
	if name == "" {
		name = WorkloadName(obj.GetName(), obj.GetUID(), w.Integration.GVK)
	}
	if w.Integration.Elastic && w.Options.ElasticJobs && IsElastic(obj) {
		if slice := w.admittedSlice(ctx, obj); slice != "" {
			name = slice
		}
	}
	return checkRunnable(ctx, w.Client, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, obj, suspend)
}

// checkRunnable refuses (Forbidden at path) unless the Workload key is
// admitted for the job: admitted, not finished, and not controlled by
// another object (a prebuilt-workload-name label naming another job's
// Workload would let the job run on quota charged to that job).
func checkRunnable(ctx context.Context, c client.Reader, key types.NamespacedName, obj client.Object, path *field.Path) field.ErrorList {
	wl, err := readAdmitted(ctx, c, key)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return field.ErrorList{field.InternalError(path, err)}
	case wl == nil || !IsAdmitted(wl):
		return field.ErrorList{field.Forbidden(path,
			fmt.Sprintf("the job is queued by Kuota and may start only once its Workload %s is admitted", key.Name))}
	}
	if owner := foreignController(wl, obj); owner != nil {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"Workload %s (label %s) is controlled by %s %s: a job may start only on a Workload of its own", key.Name, PrebuiltWorkloadLabel, owner.Kind, owner.Name))}
	}
	if isFinished(wl) {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("Workload %s is finished: it holds no quota to start the job on", key.Name))}
	}
	return nil
}

// admittedSlice names the admitted Workload slice of an elastic job (its
// slices after the first have names of their own); "" when the cache shows
// none.
func (w *Webhook) admittedSlice(ctx context.Context, obj client.Object) string {
	lister := w.Client
	if lf, ok := w.Client.(LiveFallback); ok {
		lister = lf.Cached
	}
	var list kueue.WorkloadList
	if err := lister.List(ctx, &list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{IndexWorkloadJob: jobIndexKey(w.Integration.GVK.GroupKind(), obj.GetName())}); err != nil {
		return ""
	}
	for i := range list.Items {
		wl := &list.Items[i]
		if wl.Labels[JobUIDLabel] == string(obj.GetUID()) && !isFinished(wl) && IsAdmitted(wl) {
			return wl.Name
		}
	}
	return ""
}

// suspendField is the path of the field that holds the job.
func suspendField(job Job) *field.Path {
	if j, ok := job.(JobWithSuspendField); ok {
		return j.SuspendField()
	}
	return field.NewPath("spec", "suspend")
}

// CheckAdmitted refuses (as Forbidden at path, with msg formatted with the
// Workload's name) unless the Workload key is admitted. A cached reader
// that lags behind the admission (another replica leads, or the informer
// is behind) is checked against the API server before refusing, when it
// can read live (LiveFallback).
func CheckAdmitted(ctx context.Context, c client.Reader, key types.NamespacedName, path *field.Path, msg string) field.ErrorList {
	wl, err := readAdmitted(ctx, c, key)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return field.ErrorList{field.InternalError(path, err)}
	case wl != nil && IsAdmitted(wl):
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf(msg, key.Name))}
}

// readAdmitted reads the Workload key: from c, and from the API server
// when c's copy is missing or not admitted and c can read live. It returns
// the last copy read, admitted or not, or the last error.
func readAdmitted(ctx context.Context, c client.Reader, key types.NamespacedName) (*kueue.Workload, error) {
	var wl kueue.Workload
	err := c.Get(ctx, key, &wl)
	if err == nil && IsAdmitted(&wl) {
		return &wl, nil
	}
	if live, ok := c.(interface {
		GetLive(context.Context, client.ObjectKey, client.Object) error
	}); ok {
		wl = kueue.Workload{}
		err = live.GetLive(ctx, key, &wl)
	}
	if err != nil {
		return nil, err
	}
	return &wl, nil
}

func (w *Webhook) result(obj client.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(w.Integration.GVK.GroupKind(), obj.GetName(), errs)
}

// ValidateLabels checks the values of the Kuota labels a job carries.
func ValidateLabels(obj client.Object) field.ErrorList {
	var errs field.ErrorList
	labels := obj.GetLabels()
	for _, key := range []string{QueueNameLabel, PrebuiltWorkloadLabel, PriorityClassLabel} {
		if v, ok := labels[key]; ok {
			for _, msg := range validation.IsDNS1123Subdomain(v) {
				errs = append(errs, field.Invalid(labelsPath.Key(key), v, msg))
			}
		}
	}
	if v, ok := labels[MaxExecTimeSecondsLabel]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err != nil || n <= 0 {
			errs = append(errs, field.Invalid(labelsPath.Key(MaxExecTimeSecondsLabel), v, "must be a positive number of seconds"))
		}
	}
	return errs
}

// ValidateLabelChanges checks label changes on update: the queue name and
// maximum execution time may change only while the job is suspended; a
// priority class cannot be removed, nor added to a running job.
func ValidateLabelChanges(oldObj, newObj client.Object, oldSuspended, newSuspended bool) field.ErrorList {
	var errs field.ErrorList
	oldL, newL := oldObj.GetLabels(), newObj.GetLabels()
	running := !oldSuspended && !newSuspended
	for _, key := range []string{QueueNameLabel, MaxExecTimeSecondsLabel, PrebuiltWorkloadLabel} {
		if running && oldL[key] != newL[key] {
			errs = append(errs, field.Forbidden(labelsPath.Key(key), "cannot change while the job runs"))
		}
	}
	oldPC, hadPC := oldL[PriorityClassLabel]
	newPC, hasPC := newL[PriorityClassLabel]
	switch {
	case hadPC && !hasPC:
		errs = append(errs, field.Forbidden(labelsPath.Key(PriorityClassLabel), fmt.Sprintf("cannot be removed (was %q)", oldPC)))
	case !hadPC && hasPC && !oldSuspended:
		errs = append(errs, field.Forbidden(labelsPath.Key(PriorityClassLabel), fmt.Sprintf("cannot be added to a running job (%q)", newPC)))
	}
	return errs
}

// SetupWebhook registers a kind's webhooks for objects of type T.
func SetupWebhook[T client.Object](mgr ctrl.Manager, obj T, w *Webhook) error {
	return ctrl.NewWebhookManagedBy(mgr, obj).
		WithDefaulter(typedWebhook[T]{w}).
		WithValidator(typedWebhook[T]{w}).
		Complete()
}

// typedWebhook adapts Webhook to controller-runtime's typed interfaces.
type typedWebhook[T client.Object] struct{ w *Webhook }

func (t typedWebhook[T]) Default(ctx context.Context, obj T) error { return t.w.Default(ctx, obj) }

func (t typedWebhook[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	return nil, t.w.ValidateCreate(ctx, obj)
}

func (t typedWebhook[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	return nil, t.w.ValidateUpdate(ctx, oldObj, newObj)
}

func (t typedWebhook[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

var (
	_ admission.Defaulter[client.Object] = typedWebhook[client.Object]{}
	_ admission.Validator[client.Object] = typedWebhook[client.Object]{}
)
