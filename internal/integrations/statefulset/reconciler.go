package statefulset

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch

// Reconciler keeps the total count of a managed StatefulSet's pods equal
// to its replicas, so that its group's Workload follows a scale.
type Reconciler struct {
	Client client.Client
}

func setupReconciler(mgr ctrl.Manager, _ jobframework.Options) error {
	r := &Reconciler{Client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("statefulset").
		For(&appsv1.StatefulSet{}, builder.WithPredicates(predicate.NewPredicateFuncs(managedSet))).
		Complete(r)
}

// managedSet reports a StatefulSet whose pods the pod integration gates.
func managedSet(o client.Object) bool {
	s, ok := o.(*appsv1.StatefulSet)
	return ok && s.Spec.Template.Annotations[jobframework.SuspendingParentAnnotation] == FrameworkName
}

// Reconcile updates the total count of pods that say another one.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s appsv1.StatefulSet
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !managedSet(&s) || !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	want := strconv.Itoa(int(replicas(&s)))
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(s.Namespace),
		client.MatchingLabels{jobframework.PodGroupNameLabel: GroupName(s.Name)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the pods of StatefulSet %s: %w", s.Name, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Annotations[jobframework.PodGroupTotalCountAnnotation] == want || !p.DeletionTimestamp.IsZero() {
			continue
		}
		patch := client.MergeFrom(p.DeepCopy())
		p.Annotations[jobframework.PodGroupTotalCountAnnotation] = want
		if err := r.Client.Patch(ctx, p, patch); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("updating the total count of pod %s: %w", p.Name, err)
		}
	}
	return ctrl.Result{}, nil
}
