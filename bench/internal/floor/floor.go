// Package floor is a stand-in for the manager that measures the API
// server's floor: it admits every Workload as soon as it sees it, with the
// one status write Kuota makes for an admission (the same server-side
// apply under kueue-admission, built by internal/apply), and ignores quota,
// priorities and preemption. No manager that respects quota can do less
// API work on a schedule, so a run with it shows the wall time and time to
// admission that the API server, etcd and the harness alone allow on the
// machine. It overcommits every queue, so usage figures mean nothing.
package floor

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Admitter admits every pending Workload at once.
type Admitter struct {
	Client client.Client
	Writer *apply.Writer
}

// SetupWithManager registers the admitter with workers parallel writers.
func (a *Admitter) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.Workload{}).Named("floor").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).Complete(a)
}

// Reconcile admits the workload unless it has a reservation, has finished
// or its queue or flavor is unknown yet (then it retries).
func (a *Admitter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var wl kueue.Workload
	if err := a.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if wl.Status.Admission != nil || apply.IsTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
		return reconcile.Result{}, nil
	}
	var lq kueue.LocalQueue
	if err := a.Client.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &lq); err != nil {
		return reconcile.Result{}, fmt.Errorf("reading the workload's LocalQueue: %w", err)
	}
	var flavors kueue.ResourceFlavorList
	if err := a.Client.List(ctx, &flavors); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing ResourceFlavors: %w", err)
	}
	if len(flavors.Items) == 0 {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	names := make([]string, 0, len(flavors.Items))
	for _, f := range flavors.Items {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	st := apply.Reserve(&wl, Admission(&wl, lq.Spec.ClusterQueue, kueue.ResourceFlavorReference(names[0])), nil, metav1.Now())
	err := a.Writer.WorkloadStatus(ctx, &wl, st, apply.AdmissionManager)
	if apierrors.IsConflict(err) {
		// A newer version is on its way through the informer.
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, err
}

// Admission assigns every resource of every podset to flavor in cq.
func Admission(wl *kueue.Workload, cq kueue.ClusterQueueReference, flavor kueue.ResourceFlavorReference) *kueue.Admission {
	adm := &kueue.Admission{ClusterQueue: cq}
	for _, ps := range wl.Spec.PodSets {
		count := ps.Count
		psa := kueue.PodSetAssignment{Name: ps.Name, Count: &count,
			Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{}, ResourceUsage: corev1.ResourceList{}}
		perPodRequests, _ := resources.PodRequests(&ps.Template.Spec) // the harness's own small jobs
		for name, perPod := range perPodRequests {
			psa.Flavors[name] = flavor
			psa.ResourceUsage[name] = resources.ToQuantity(name, resources.Mul(perPod, int64(count)))
		}
		adm.PodSetAssignments = append(adm.PodSetAssignments, psa)
	}
	return adm
}

// Activator marks every ClusterQueue Active, which is all the harness
// waits for before its schedule starts.
type Activator struct {
	Client client.Client
}

// SetupWithManager registers the activator.
func (a *Activator) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.ClusterQueue{}).Named("floor-activator").Complete(a)
}

// Reconcile sets Active=True on the ClusterQueue.
func (a *Activator) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cq kueue.ClusterQueue
	if err := a.Client.Get(ctx, req.NamespacedName, &cq); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if apply.IsTrue(cq.Status.Conditions, kueue.ClusterQueueActive) {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(cq.DeepCopy())
	apply.SetCondition(&cq.Status.Conditions, kueue.ClusterQueueActive, metav1.ConditionTrue, "Ready",
		"Active (floor-manager admits everything)", cq.Generation, metav1.Now())
	return reconcile.Result{}, a.Client.Status().Patch(ctx, &cq, patch)
}
