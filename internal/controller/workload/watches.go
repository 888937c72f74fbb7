package workload

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Field indexes the controller lists by.
const (
	// IndexQueueName indexes Workloads by spec.queueName.
	IndexQueueName = "spec.queueName"
	// IndexAdmittedIn indexes Workloads by status.admission.clusterQueue.
	IndexAdmittedIn = "status.admission.clusterQueue"
	// IndexClusterQueue indexes LocalQueues by spec.clusterQueue.
	IndexClusterQueue = "spec.clusterQueue"
)

// IndexFields registers the field indexes the watches below use.
func IndexFields(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &kueue.Workload{}, IndexQueueName, func(o client.Object) []string {
		return []string{string(o.(*kueue.Workload).Spec.QueueName)}
	}); err != nil {
		return fmt.Errorf("indexing Workloads by queue: %w", err)
	}
	if err := idx.IndexField(ctx, &kueue.Workload{}, IndexAdmittedIn, func(o client.Object) []string {
		if adm := o.(*kueue.Workload).Status.Admission; adm != nil {
			return []string{string(adm.ClusterQueue)}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing Workloads by admitting ClusterQueue: %w", err)
	}
	if err := idx.IndexField(ctx, &kueue.LocalQueue{}, IndexClusterQueue, func(o client.Object) []string {
		return []string{string(o.(*kueue.LocalQueue).Spec.ClusterQueue)}
	}); err != nil {
		return fmt.Errorf("indexing LocalQueues by ClusterQueue: %w", err)
	}
	return nil
}

// workloadsOfQueue maps a ClusterQueue or LocalQueue to its workloads.
func (r *Reconciler) workloadsOfQueue(ctx context.Context, obj client.Object) []reconcile.Request {
	if _, ok := obj.(*kueue.ClusterQueue); ok {
		return r.workloadsOfClusterQueue(ctx, obj)
	}
	return r.workloadsOfLocalQueue(ctx, obj)
}

// workloadsOfLocalQueue maps a LocalQueue to the Workloads that name it: a
// change of its spec (stop policy, ClusterQueue) or its creation or
// deletion affects them all.
func (r *Reconciler) workloadsOfLocalQueue(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.listRequests(ctx, client.InNamespace(obj.GetNamespace()), client.MatchingFields{IndexQueueName: obj.GetName()})
}

// workloadsOfClusterQueue maps a ClusterQueue to the Workloads holding
// quota in it and those waiting in its LocalQueues.
func (r *Reconciler) workloadsOfClusterQueue(ctx context.Context, obj client.Object) []reconcile.Request {
	out := r.listRequests(ctx, client.MatchingFields{IndexAdmittedIn: obj.GetName()})
	var lqs kueue.LocalQueueList
	if err := r.Client.List(ctx, &lqs, client.MatchingFields{IndexClusterQueue: obj.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing LocalQueues of a ClusterQueue", "clusterQueue", obj.GetName())
		return out
	}
	for i := range lqs.Items {
		out = append(out, r.workloadsOfLocalQueue(ctx, &lqs.Items[i])...)
	}
	return out
}

func (r *Reconciler) listRequests(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	var list kueue.WorkloadList
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Workloads to reconcile")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: keyOf(&list.Items[i])})
	}
	return out
}
