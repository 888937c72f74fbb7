package devcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const pollInterval = 200 * time.Millisecond

// probe asks the API server for /readyz once. answered is false when nothing
// answered at all (the cluster is stopped); ready is true on "ok".
func probe(ctx context.Context, cfg *rest.Config) (answered, ready bool) {
	c := rest.CopyConfig(cfg)
	c.Timeout = probeTimeout
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return false, false
	}
	var code int
	err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Error()
	return code != 0, err == nil
}

// waitReady waits until the API server is ready and the default
// ServiceAccount exists (pods cannot be created before it does).
func waitReady(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		if err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
			last = fmt.Errorf("API server not ready: %w", err)
			return false, nil
		}
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			last = fmt.Errorf("default ServiceAccount: %w", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the cluster to be ready: %w", errors.Join(err, last))
	}
	return nil
}

// reconcileNodes applies the wanted nodes and deletes the fake nodes of
// earlier runs that are no longer wanted. It returns the wanted names.
func reconcileNodes(ctx context.Context, cs kubernetes.Interface, want []NodeSpec) ([]string, error) {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	nodes := cs.CoreV1().Nodes()
	names := make([]string, 0, len(want))
	wanted := make(map[string]bool, len(want))
	for _, n := range want {
		if _, err := nodes.Apply(ctx, n.ApplyConfig(), opts); err != nil {
			return nil, fmt.Errorf("applying node %s: %w", n.Name, err)
		}
		if _, err := nodes.ApplyStatus(ctx, n.StatusApplyConfig(), opts); err != nil {
			return nil, fmt.Errorf("applying the status of node %s: %w", n.Name, err)
		}
		names = append(names, n.Name)
		wanted[n.Name] = true
	}
	list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: NodeGroupLabel})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range list.Items {
		if stale(&list.Items[i], wanted) {
			err := nodes.Delete(ctx, list.Items[i].Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("deleting node %s: %w", list.Items[i].Name, err)
			}
		}
	}
	return names, nil
}

// stale reports a fake node made by Up that is no longer wanted.
func stale(n *corev1.Node, wanted map[string]bool) bool {
	return !wanted[n.Name] && n.Annotations[KwokNodeAnnotation] == kwokNodeValue
}
