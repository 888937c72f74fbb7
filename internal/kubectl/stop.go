package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// stop and resume of ClusterQueues, LocalQueues (spec.stopPolicy) and
// Workloads (spec.active).

func newStopCommand(k *kit) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the resource",
		Long:  "Stop a ClusterQueue or LocalQueue from admitting workloads (and, unless --keep-already-running, evict what runs), or deactivate a Workload.",
	}
	cmd.AddCommand(
		newQueueStopCommand(k, "clusterqueue", []string{"cq"}, true, false),
		newQueueStopCommand(k, "localqueue", []string{"lq"}, false, false),
		newWorkloadActivationCommand(k, false))
	return cmd
}

func newResumeCommand(k *kit) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Resume the resource",
		Long:  "Let a stopped ClusterQueue or LocalQueue admit workloads again, or reactivate a Workload.",
	}
	cmd.AddCommand(
		newQueueStopCommand(k, "clusterqueue", []string{"cq"}, true, true),
		newQueueStopCommand(k, "localqueue", []string{"lq"}, false, true),
		newWorkloadActivationCommand(k, true))
	return cmd
}

// queue is a ClusterQueue or a LocalQueue: both have spec.stopPolicy.
type queue interface {
	client.Object
	stopPolicy() **kueue.StopPolicy
}

type clusterQueue struct{ kueue.ClusterQueue }

func (q *clusterQueue) stopPolicy() **kueue.StopPolicy { return &q.Spec.StopPolicy }

type localQueue struct{ kueue.LocalQueue }

func (q *localQueue) stopPolicy() **kueue.StopPolicy { return &q.Spec.StopPolicy }

// newQueueStopCommand is stop (or resume, when resume) of a queue kind.
func newQueueStopCommand(k *kit, kind string, aliases []string, clusterScoped, resume bool) *cobra.Command {
	var keepRunning bool
	title := map[string]string{"clusterqueue": "ClusterQueue", "localqueue": "LocalQueue"}[kind]
	cmd := &cobra.Command{
		Use:                   kind + " NAME [--keep-already-running]",
		DisableFlagsInUseLine: true,
		Aliases:               aliases,
		Short:                 "Stop the " + title,
		Long:                  "Puts the given " + title + " on hold: it admits no more workloads and, unless --keep-already-running, evicts the admitted ones (stopPolicy HoldAndDrain; Hold with the flag).",
		Example:               "  kubectl kuota stop " + kind + " my-" + kind,
		Args:                  cobra.ExactArgs(1),
	}
	if resume {
		cmd.Use = kind + " NAME"
		cmd.Short = "Resume the " + title
		cmd.Long = "Resumes the given " + title + ": it admits workloads again (stopPolicy None)."
		cmd.Example = "  kubectl kuota resume " + kind + " my-" + kind
	} else {
		cmd.Flags().BoolVar(&keepRunning, "keep-already-running", false, "Keep the workloads already admitted running: only stop admitting new ones.")
	}
	p := newObjectPrinter(cmd, "")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		s, err := k.connect()
		if err != nil {
			return err
		}
		var q queue = &clusterQueue{}
		key := client.ObjectKey{Name: args[0]}
		var obj client.Object = &q.(*clusterQueue).ClusterQueue
		if !clusterScoped {
			lq := &localQueue{}
			q, obj, key.Namespace = lq, &lq.LocalQueue, s.namespace
		}
		ctx := cmd.Context()
		if err := s.client.Get(ctx, key, obj); err != nil {
			return err
		}
		before := obj.DeepCopyObject().(client.Object)
		policy := kueue.HoldAndDrain
		switch {
		case resume:
			policy = kueue.None
		case keepRunning:
			policy = kueue.Hold
		}
		*q.stopPolicy() = ptr.To(policy)
		if err := s.client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return err
		}
		return p.print(dryRunNone, obj, k)
	}
	return cmd
}

// newWorkloadActivationCommand is stop workload (spec.active=false) or
// resume workload (spec.active=true).
func newWorkloadActivationCommand(k *kit, active bool) *cobra.Command {
	var dry string
	op, verb := "stopped", "stop"
	long := "Deactivates the given Workload: it is not admitted, and if it is admitted it is evicted and put back in its queue (spec.active=false)."
	if active {
		op, verb = "resumed", "resume"
		long = "Reactivates the given Workload so that it can be admitted again (spec.active=true)."
	}
	cmd := &cobra.Command{
		Use:                   "workload NAME [--namespace NAMESPACE] [--dry-run STRATEGY]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"wl"},
		Short:                 map[bool]string{false: "Stop the Workload", true: "Resume the Workload"}[active],
		Long:                  long,
		Example:               "  kubectl kuota " + verb + " workload my-workload -n team-a",
		Args:                  cobra.ExactArgs(1),
	}
	p := newObjectPrinter(cmd, op)
	addDryRunFlag(cmd, &dry)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		d, err := parseDryRun(dry)
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		wl := &kueue.Workload{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: args[0]}, wl); err != nil {
			return err
		}
		before := wl.DeepCopy()
		wl.Spec.Active = ptr.To(active)
		if d != dryRunClient {
			if err := s.client.Patch(ctx, wl, client.MergeFrom(before), &client.PatchOptions{DryRun: d.serverDryRun()}); err != nil {
				return err
			}
		}
		return p.print(d, wl, k)
	}
	return cmd
}
