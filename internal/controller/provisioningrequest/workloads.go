package provisioningrequest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/provisioning"
)

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests,verbs=get;list;watch;create;delete;update;patch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests/status,verbs=get
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch;create;delete;update;patch

// WorkloadReconciler makes the ProvisioningRequests of workloads with a
// check of this controller and keeps the checks' states.
type WorkloadReconciler struct {
	Client client.Client
	// APIReader reads a Workload whole when a request is built (the
	// cache keeps its pod templates trimmed).
	APIReader client.Reader
	Writer    *apply.Writer
	Recorder  record.EventRecorder
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// SetupWithManager registers the reconciler: Workloads with admission
// checks, and the ProvisioningRequests they own.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("provisioning-workload").
		For(&kueue.Workload{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			wl, ok := obj.(*kueue.Workload)
			return ok && len(wl.Status.AdmissionChecks) > 0
		}))).
		Owns(&autoscaling.ProvisioningRequest{}).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 5}).
		Complete(r)
}

func (r *WorkloadReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile decides each of the workload's checks of this controller and
// carries the decisions out: deletions, then the request, then one status
// write for all the checks.
func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := r.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var states []kueue.AdmissionCheckState
	for _, st := range wl.Status.AdmissionChecks {
		ci, err := r.input(ctx, &wl, st)
		if err != nil {
			return ctrl.Result{}, err
		}
		if ci == nil {
			continue
		}
		d := provisioning.Decide(ci.in)
		if err := r.act(ctx, &wl, ci, d); err != nil {
			return controller.Outcome(ctx, err)
		}
		if d.State != nil {
			states = append(states, *d.State)
		}
	}
	if len(states) == 0 {
		return ctrl.Result{}, nil
	}
	return controller.Outcome(ctx, r.writeStates(ctx, &wl, states))
}

// checkInput is what Decide reads for one check, and the workload's
// requests of the check by name.
type checkInput struct {
	in   provisioning.Input
	objs map[string]*autoscaling.ProvisioningRequest
}

// input gathers a checkInput; nil for checks of other controllers.
func (r *WorkloadReconciler) input(ctx context.Context, wl *kueue.Workload, st kueue.AdmissionCheckState) (*checkInput, error) {
	var ac kueue.AdmissionCheck
	if err := r.Client.Get(ctx, client.ObjectKey{Name: string(st.Name)}, &ac); err != nil || !ours(&ac) {
		return nil, client.IgnoreNotFound(err)
	}
	ci := &checkInput{in: provisioning.Input{Workload: wl, Check: st.Name, Requests: map[int32]*provisioning.Request{}, Now: r.now()},
		objs: map[string]*autoscaling.ProvisioningRequest{}}
	if meta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive) {
		cfg, err := configOf(ctx, r.Client, &ac)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			ci.in.Config = &cfg.Spec
		}
	}
	for a := int32(1); a <= provisioning.Attempt(&st); a++ {
		var pr autoscaling.ProvisioningRequest
		key := client.ObjectKey{Namespace: wl.Namespace, Name: provisioning.RequestName(wl.Name, string(st.Name), a)}
		err := r.Client.Get(ctx, key, &pr)
		switch {
		case err == nil:
			if metav1.IsControlledBy(&pr, wl) {
				ci.in.Requests[a], ci.objs[pr.Name] = requestOf(&pr), &pr
			}
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading ProvisioningRequest %s: %w", key, err)
		}
	}
	return ci, nil
}

// requestOf is what the decision reads of a ProvisioningRequest.
func requestOf(pr *autoscaling.ProvisioningRequest) *provisioning.Request {
	out := &provisioning.Request{Name: pr.Name, Conditions: pr.Status.Conditions}
	for k, v := range pr.Status.ProvisioningClassDetails {
		if out.Details == nil {
			out.Details = map[string]string{}
		}
		out.Details[k] = string(v)
	}
	return out
}

// requestFrom makes the ProvisioningRequest of a plan.
func requestFrom(plan *provisioning.Plan) *autoscaling.ProvisioningRequest {
	pr := &autoscaling.ProvisioningRequest{ObjectMeta: *plan.Meta.DeepCopy(), Spec: autoscaling.ProvisioningRequestSpec{
		ProvisioningClassName: plan.ClassName}}
	pr.Labels = map[string]string{jobframework.ManagedLabel: jobframework.ManagedLabelValue}
	for k, v := range plan.Parameters {
		if pr.Spec.Parameters == nil {
			pr.Spec.Parameters = map[string]autoscaling.Parameter{}
		}
		pr.Spec.Parameters[k] = autoscaling.Parameter(v)
	}
	for i, t := range plan.Templates {
		pr.Spec.PodSets = append(pr.Spec.PodSets, autoscaling.PodSet{PodTemplateRef: autoscaling.Reference{Name: t.Name}, Count: plan.Counts[i]})
	}
	return pr
}

// act deletes what the decision drops and creates the request it asks
// for.
func (r *WorkloadReconciler) act(ctx context.Context, wl *kueue.Workload, ci *checkInput, d provisioning.Decision) error {
	for _, req := range d.Delete {
		if err := r.deleteRequest(ctx, ci.objs[req.Name]); err != nil {
			return err
		}
	}
	if !d.Create {
		return nil
	}
	return r.create(ctx, wl, ci.in, d.Attempt)
}

func (r *WorkloadReconciler) deleteRequest(ctx context.Context, pr *autoscaling.ProvisioningRequest) error {
	for _, ps := range pr.Spec.PodSets {
		t := &corev1.PodTemplate{}
		t.Namespace, t.Name = pr.Namespace, ps.PodTemplateRef.Name
		if err := r.Client.Delete(ctx, t); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting PodTemplate %s/%s: %w", t.Namespace, t.Name, err)
		}
	}
	if err := r.Client.Delete(ctx, pr, client.Preconditions{UID: &pr.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting ProvisioningRequest %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	return nil
}

// create builds the request from the whole Workload as the API server
// has it and creates its PodTemplates, then the request.
func (r *WorkloadReconciler) create(ctx context.Context, cached *kueue.Workload, in provisioning.Input, attempt int32) error {
	var wl kueue.Workload
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), &wl); err != nil {
		return fmt.Errorf("reading Workload %s/%s: %w", cached.Namespace, cached.Name, err)
	}
	if wl.UID != cached.UID || wl.Status.Admission == nil {
		return nil
	}
	flavors := map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		for _, name := range psa.Flavors {
			var rf kueue.ResourceFlavor
			if err := r.Client.Get(ctx, client.ObjectKey{Name: string(name)}, &rf); err == nil {
				flavors[name] = &rf
			}
		}
	}
	plan := provisioning.Build(&wl, string(in.Check), attempt, in.Config, flavors)
	for _, t := range plan.Templates {
		t.Labels = map[string]string{jobframework.ManagedLabel: jobframework.ManagedLabelValue}
		if err := r.Client.Create(ctx, t); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PodTemplate %s/%s: %w", t.Namespace, t.Name, err)
		}
	}
	pr := requestFrom(plan)
	if err := r.Client.Create(ctx, pr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating ProvisioningRequest %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	r.Recorder.Eventf(cached, corev1.EventTypeNormal, "ProvisioningRequestCreated",
		"Created ProvisioningRequest %s for admission check %s (attempt %d)", pr.Name, in.Check, attempt)
	return nil
}

// writeStates writes the checks' new states in one status write, with the
// workload's resourceVersion as a precondition.
func (r *WorkloadReconciler) writeStates(ctx context.Context, wl *kueue.Workload, states []kueue.AdmissionCheckState) error {
	st := apply.AdmissionStatus(wl)
	for _, s := range states {
		for i := range st.AdmissionChecks {
			if st.AdmissionChecks[i].Name == s.Name {
				st.AdmissionChecks[i] = s
			}
		}
	}
	if err := r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return err
	}
	for _, s := range states {
		if s.State == kueue.CheckStateReady || s.State == kueue.CheckStatePending {
			continue
		}
		r.Recorder.Eventf(wl, corev1.EventTypeWarning, "ProvisioningRequest"+string(s.State), "Admission check %s: %s", s.Name, s.Message)
	}
	return nil
}
