package kubectl

import (
	"errors"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// list clusterqueue and list localqueue.

func newListClusterQueueCommand(k *kit) *cobra.Command {
	var f listFlags
	var active []bool
	cmd := &cobra.Command{
		Use:                   "clusterqueue [--selector KEY=VALUE] [--field-selector KEY=VALUE] [--active=true|false]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"cq"},
		Short:                 "List ClusterQueues",
		Long:                  "Lists all ClusterQueues, potentially limiting output to those that are active/inactive and matching the label selector.",
		Example:               "  kubectl kuota list clusterqueue --active=false",
		Args:                  cobra.NoArgs,
	}
	addListFlags(cmd, &f, false)
	cmd.Flags().BoolSliceVar(&active, "active", nil, "Filter by active status. Valid values: 'true' and 'false'.")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if len(active) > 1 {
			return errors.New("--active: only one value can be given")
		}
		opts, err := f.options("")
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		var all, page kueue.ClusterQueueList
		err = listAll(cmd.Context(), s, &page, opts, func() {
			for _, cq := range page.Items {
				if len(active) == 0 || active[0] == clusterQueueActive(&cq) {
					all.Items = append(all.Items, cq)
				}
			}
		})
		if err != nil {
			return err
		}
		if done, err := f.printOutput(k, &all); done {
			return err
		}
		if len(all.Items) == 0 {
			noResources(k, false, false, "")
			return nil
		}
		now := k.opts.Now()
		t := table{columns: []column{{"Name", "string"}, {"Cohort", "string"}, {"Pending Workloads", "integer"},
			{"Admitted Workloads", "integer"}, {"Active", "boolean"}, {"Age", "string"}}}
		for i := range all.Items {
			cq := &all.Items[i]
			t.add(cq, cq.Name, string(cq.Spec.CohortName), cq.Status.PendingWorkloads, cq.Status.AdmittedWorkloads,
				clusterQueueActive(cq), age(now, cq.CreationTimestamp))
		}
		return t.print(k, false)
	}
	return cmd
}

func clusterQueueActive(cq *kueue.ClusterQueue) bool {
	return apimeta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ClusterQueueActive)
}

func newListLocalQueueCommand(k *kit) *cobra.Command {
	var f listFlags
	var clusterQueue string
	cmd := &cobra.Command{
		Use:                   "localqueue [--clusterqueue CLUSTER_QUEUE_NAME] [--selector KEY=VALUE] [--field-selector KEY=VALUE] [--all-namespaces]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"lq"},
		Short:                 "List LocalQueue",
		Long:                  "Lists LocalQueues that match the given criteria: point to the specified ClusterQueue, belong to the specified namespace, match the label selector or the field selector.",
		Example:               "  kubectl kuota list localqueue -A -c my-cluster-queue",
		Args:                  cobra.NoArgs,
	}
	addListFlags(cmd, &f, true)
	addClusterQueueFilterFlag(cmd, &clusterQueue)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, err := k.connect()
		if err != nil {
			return err
		}
		opts, err := f.options(f.namespace(s))
		if err != nil {
			return err
		}
		var all, page kueue.LocalQueueList
		err = listAll(cmd.Context(), s, &page, opts, func() {
			for _, lq := range page.Items {
				if clusterQueue == "" || string(lq.Spec.ClusterQueue) == clusterQueue {
					all.Items = append(all.Items, lq)
				}
			}
		})
		if err != nil {
			return err
		}
		if done, err := f.printOutput(k, &all); done {
			return err
		}
		if len(all.Items) == 0 {
			noResources(k, true, f.allNamespaces, s.namespace)
			return nil
		}
		now := k.opts.Now()
		t := table{columns: []column{{"Name", "string"}, {"ClusterQueue", "string"}, {"Pending Workloads", "integer"},
			{"Admitted Workloads", "integer"}, {"Age", "string"}}}
		for i := range all.Items {
			lq := &all.Items[i]
			t.add(lq, lq.Name, string(lq.Spec.ClusterQueue), lq.Status.PendingWorkloads, lq.Status.AdmittedWorkloads,
				age(now, lq.CreationTimestamp))
		}
		return t.print(k, f.allNamespaces)
	}
	return cmd
}
