package audit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	wlpkg "github.com/kuota-dev/kuota/internal/workload"
)

// listPods reads every pod and keeps those of managed jobs.
func listPods(ctx context.Context, c client.Reader) ([]Pod, error) {
	var list corev1.PodList
	var out []Pod
	err := listAll(ctx, c, &list, "pods", func() {
		for i := range list.Items {
			if p, ok := podOf(&list.Items[i]); ok {
				out = append(out, p)
			}
		}
	})
	return out, err
}

// readJobs says, for every Workload holding quota whose job it can name,
// whether that job (same UID) still exists. It reads metadata only, one
// list per kind and namespace; a plain pod's job is looked up in pods. A
// kind the API server does not serve any more has no jobs.
func readJobs(ctx context.Context, c client.Reader, wls []kueue.Workload, pods []Pod) (map[string]bool, error) {
	type scope struct {
		gvk schema.GroupVersionKind
		ns  string
	}
	wanted := map[scope]map[string]types.UID{} // scope -> Workload -> job UID
	for i := range wls {
		wl := &wls[i]
		if !holdsQuota(wl) {
			continue
		}
		ref, ok := wlpkg.JobOf(wl)
		if !ok {
			continue
		}
		s := scope{ref.GVK, wl.Namespace}
		if wanted[s] == nil {
			wanted[s] = map[string]types.UID{}
		}
		wanted[s][wl.Namespace+"/"+wl.Name] = ref.UID
	}
	podUIDs := map[types.UID]bool{}
	for i := range pods {
		podUIDs[pods[i].UID] = true
	}
	out := map[string]bool{}
	for s, refs := range wanted {
		uids := podUIDs
		if s.gvk != corev1.SchemeGroupVersion.WithKind("Pod") {
			var err error
			if uids, err = listUIDs(ctx, c, s.gvk, s.ns); err != nil {
				return nil, err
			}
		}
		for wl, uid := range refs {
			out[wl] = uids[uid]
		}
	}
	return out, nil
}

// holdsQuota: QuotaReserved=True with an admission, not finished.
func holdsQuota(wl *kueue.Workload) bool {
	conds := wl.Status.Conditions
	return wl.Status.Admission != nil && apimeta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved) &&
		!apimeta.IsStatusConditionTrue(conds, kueue.WorkloadFinished)
}

// listUIDs lists the metadata of the objects of a kind in a namespace.
func listUIDs(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, ns string) (map[types.UID]bool, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	out := map[types.UID]bool{}
	token := ""
	for {
		opts := []client.ListOption{client.InNamespace(ns), client.Limit(listPageSize)}
		if token != "" {
			opts = append(opts, client.Continue(token))
		}
		err := c.List(ctx, list, opts...)
		if apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s in namespace %s to find the jobs of Workloads: %w", gvk.Kind, ns, err)
		}
		for i := range list.Items {
			out[list.Items[i].UID] = true
		}
		if token = list.GetContinue(); token == "" {
			return out, nil
		}
	}
}
