package trainjob

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// PrerequisiteWatches watches both runtime kinds: a runtime that appears
// or changes brings back the TrainJobs that name it (a TrainJob waiting
// for its runtime gets its Workload then).
func (t *TrainJob) PrerequisiteWatches(c client.Reader) []jobframework.PrerequisiteWatch {
	out := make([]jobframework.PrerequisiteWatch, 0, 2)
	for _, gvk := range []schema.GroupVersionKind{TrainingRuntimeGVK, ClusterTrainingRuntimeGVK} {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		out = append(out, jobframework.PrerequisiteWatch{Object: obj, Jobs: func(ctx context.Context, rt client.Object) []reconcile.Request {
			return trainJobsOf(ctx, c, gvk, rt)
		}})
	}
	return out
}

// trainJobsOf lists the TrainJobs that name the runtime: those of its
// namespace for a TrainingRuntime, all for a ClusterTrainingRuntime.
func trainJobsOf(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, rt client.Object) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(GVK.GroupVersion().WithKind(GVK.Kind + "List"))
	var opts []client.ListOption
	if ns := rt.GetNamespace(); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the TrainJobs of a runtime", "runtime", rt.GetName())
		return nil
	}
	want := types.NamespacedName{Namespace: rt.GetNamespace(), Name: rt.GetName()}
	var out []reconcile.Request
	for i := range list.Items {
		u := &list.Items[i]
		if refGVK, key, err := runtimeRef(u); err == nil && refGVK == gvk && key == want {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(u)})
		}
	}
	return out
}
