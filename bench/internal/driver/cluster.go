package driver

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createCluster creates a topology scenario's nodes and Topology, as
// Kueue's scalability runner does: each node is created, then given its
// status (Ready, its allocatable resources), then rid of the not-ready
// taint the API server put on it at creation (no node controller runs to
// lift it). The Topology follows, then (in Setup) the flavor, so that the
// manager, which lists the nodes once a flavor names a Topology, finds
// them all Ready.
func (d *Driver) createCluster(ctx context.Context) error {
	plan := d.opts.Plan
	if len(plan.Nodes) > 0 {
		created := make([]*corev1.Node, len(plan.Nodes))
		objs := make([]client.Object, len(plan.Nodes))
		for i := range plan.Nodes {
			created[i] = plan.Nodes[i].DeepCopy()
			objs[i] = created[i]
		}
		if err := d.createAll(ctx, objs); err != nil {
			return err
		}
		if err := d.forEach(len(created), func(i int) error {
			return d.readyNode(ctx, created[i], &plan.Nodes[i].Status)
		}); err != nil {
			return err
		}
	}
	if plan.Topology != nil {
		return d.createAll(ctx, []client.Object{plan.Topology.DeepCopy()})
	}
	return nil
}

// readyNode writes a created node's status and removes its not-ready
// taint. n is the node as created (the API server's answer); each write
// is retried on a conflict against the node read anew.
func (d *Driver) readyNode(ctx context.Context, n *corev1.Node, status *corev1.NodeStatus) error {
	fresh := true
	update := func(write func() error) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if !fresh {
				if err := d.client.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
					return err
				}
			}
			fresh = false
			return write()
		})
	}
	if err := update(func() error {
		n.Status = *status.DeepCopy()
		return d.client.Status().Update(ctx, n)
	}); err != nil {
		return fmt.Errorf("setting the status of node %s: %w", n.Name, err)
	}
	fresh = true
	if err := update(func() error {
		kept := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		if len(kept) == len(n.Spec.Taints) {
			return nil
		}
		n.Spec.Taints = kept
		return d.client.Update(ctx, n)
	}); err != nil {
		return fmt.Errorf("removing the not-ready taint of node %s: %w", n.Name, err)
	}
	return nil
}
