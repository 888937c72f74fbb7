package kubectl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// create clusterqueue|localqueue|resourceflavor.

func newCreateCommand(k *kit) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a resource",
		Long:  "Create a ClusterQueue, a LocalQueue or a ResourceFlavor.",
	}
	cmd.AddCommand(newCreateClusterQueueCommand(k), newCreateLocalQueueCommand(k), newCreateResourceFlavorCommand(k))
	return cmd
}

// createObject creates obj (unless the dry run is client-side) and prints it.
func createObject(ctx context.Context, k *kit, s *session, p *objectPrinter, d dryRun, obj client.Object) error {
	if d != dryRunClient {
		if err := s.client.Create(ctx, obj, &client.CreateOptions{DryRun: d.serverDryRun()}); err != nil {
			return err
		}
	}
	return p.print(d, obj, k)
}

type clusterQueueFlags struct {
	cohort, queuingStrategy, reclaimWithinCohort, preemptionWithinCQ string
	namespaceSelector                                                map[string]string
	nominal, borrowing, lending                                      []string
	dryRun                                                           string
}

func newCreateClusterQueueCommand(k *kit) *cobra.Command {
	var f clusterQueueFlags
	cmd := &cobra.Command{
		Use: "clusterqueue NAME [--cohort COHORT] [--queuing-strategy StrictFIFO|BestEffortFIFO] " +
			"[--namespace-selector KEY=VALUE,...] [--reclaim-within-cohort POLICY] [--preemption-within-cluster-queue POLICY] " +
			"[--nominal-quota FLAVOR:RESOURCE=QUANTITY;...,...] [--borrowing-limit ...] [--lending-limit ...] [--dry-run STRATEGY]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"cq"},
		Short:                 "Creates a clusterqueue",
		Long:                  "Creates a ClusterQueue with the given name.",
		Example: `  # Create a ClusterQueue
  kubectl kuota create clusterqueue my-cluster-queue

  # With a cohort, a namespace selector and preemption policies
  kubectl kuota create clusterqueue my-cluster-queue --cohort=team --queuing-strategy=StrictFIFO \
    --namespace-selector=team=a --reclaim-within-cohort=Any --preemption-within-cluster-queue=LowerPriority

  # With quotas of two flavors
  kubectl kuota create clusterqueue my-cluster-queue --cohort=team \
    --nominal-quota "alpha:cpu=9;memory=36Gi,beta:nvidia.com/gpu=4" \
    --borrowing-limit "alpha:cpu=1;memory=4Gi" --lending-limit "beta:nvidia.com/gpu=2"`,
		Args: cobra.ExactArgs(1),
	}
	p := newObjectPrinter(cmd, "created")
	fl := cmd.Flags()
	fl.StringVar(&f.cohort, "cohort", "", "The cohort that this ClusterQueue belongs to.")
	fl.StringVar(&f.queuingStrategy, "queuing-strategy", "", "The queueing strategy of the workloads across the queues in this ClusterQueue: StrictFIFO or BestEffortFIFO.")
	fl.StringToStringVar(&f.namespaceSelector, "namespace-selector", map[string]string{}, "Labels of the namespaces allowed to submit workloads to this ClusterQueue (all namespaces when unset).")
	fl.StringVar(&f.reclaimWithinCohort, "reclaim-within-cohort", "", "Whether a pending Workload can preempt Workloads from other ClusterQueues in the cohort that use more than their nominal quota: Never, Any, LowerPriority or LowerOrNewerEqualPriority.")
	fl.StringVar(&f.preemptionWithinCQ, "preemption-within-cluster-queue", "", "Whether a pending Workload that doesn't fit within the nominal quota of its ClusterQueue can preempt active Workloads in the ClusterQueue: Never, LowerPriority or LowerOrNewerEqualPriority.")
	fl.StringSliceVar(&f.nominal, "nominal-quota", nil, "The quantity of each resource of each flavor available to the Workloads of this ClusterQueue, e.g. \"alpha:cpu=9;memory=36Gi,beta:nvidia.com/gpu=4\".")
	fl.StringSliceVar(&f.borrowing, "borrowing-limit", nil, "The maximum quota of each [flavor, resource] this ClusterQueue may borrow from the unused quota of its cohort, in the format of --nominal-quota.")
	fl.StringSliceVar(&f.lending, "lending-limit", nil, "The maximum unused quota of each [flavor, resource] this ClusterQueue may lend to its cohort, in the format of --nominal-quota.")
	addDryRunFlag(cmd, &f.dryRun)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cq, err := f.clusterQueue(cmd, args[0])
		if err != nil {
			return err
		}
		d, err := parseDryRun(f.dryRun)
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		return createObject(cmd.Context(), k, s, p, d, cq)
	}
	return cmd
}

// clusterQueue builds the ClusterQueue the flags describe.
func (f *clusterQueueFlags) clusterQueue(cmd *cobra.Command, name string) (*kueue.ClusterQueue, error) {
	cq := &kueue.ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: "ClusterQueue"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{
			CohortName:        kueue.CohortReference(f.cohort),
			QueueingStrategy:  kueue.BestEffortFIFO,
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption: &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: kueue.PreemptionPolicyNever,
				WithinClusterQueue:  kueue.PreemptionPolicyNever,
			},
		},
	}
	changed := cmd.Flags().Changed
	if changed("queuing-strategy") {
		switch s := kueue.QueueingStrategy(f.queuingStrategy); s {
		case kueue.StrictFIFO, kueue.BestEffortFIFO:
			cq.Spec.QueueingStrategy = s
		default:
			return nil, fmt.Errorf("invalid --queuing-strategy %q: must be StrictFIFO or BestEffortFIFO", f.queuingStrategy)
		}
	}
	if changed("namespace-selector") {
		cq.Spec.NamespaceSelector.MatchLabels = f.namespaceSelector
	}
	var err error
	if changed("reclaim-within-cohort") {
		if cq.Spec.Preemption.ReclaimWithinCohort, err = preemptionPolicy("reclaim-within-cohort", f.reclaimWithinCohort); err != nil {
			return nil, err
		}
	}
	if changed("preemption-within-cluster-queue") {
		if cq.Spec.Preemption.WithinClusterQueue, err = preemptionPolicy("preemption-within-cluster-queue", f.preemptionWithinCQ); err != nil {
			return nil, err
		}
	}
	if cq.Spec.ResourceGroups, err = buildResourceGroups(f.nominal, f.borrowing, f.lending); err != nil {
		return nil, err
	}
	if f.cohort == "" && (len(f.borrowing) > 0 || len(f.lending) > 0) {
		return nil, fmt.Errorf("--borrowing-limit and --lending-limit need --cohort: a ClusterQueue outside a cohort neither borrows nor lends")
	}
	return cq, nil
}

func preemptionPolicy(flag, v string) (kueue.PreemptionPolicy, error) {
	switch p := kueue.PreemptionPolicy(v); p {
	case kueue.PreemptionPolicyNever, kueue.PreemptionPolicyAny, kueue.PreemptionPolicyLowerPriority, kueue.PreemptionPolicyLowerOrNewerEqualPriority:
		return p, nil
	}
	return "", fmt.Errorf("invalid --%s %q: must be Never, Any, LowerPriority or LowerOrNewerEqualPriority", flag, v)
}

func newCreateLocalQueueCommand(k *kit) *cobra.Command {
	var clusterQueue, dry string
	var ignoreUnknown bool
	cmd := &cobra.Command{
		Use:                   "localqueue NAME -c CLUSTER_QUEUE_NAME [--ignore-unknown-cq] [--dry-run STRATEGY]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"lq"},
		Short:                 "Creates a localqueue",
		Long:                  "Creates a LocalQueue with the given name, in the namespace of --namespace or of the kubeconfig context, pointing to a ClusterQueue.",
		Example: `  # Create a LocalQueue pointing to ClusterQueue my-cluster-queue
  kubectl kuota create localqueue my-local-queue -n team-a -c my-cluster-queue

  # Even if the ClusterQueue does not exist yet
  kubectl kuota create localqueue my-local-queue -c my-cluster-queue -i`,
		Args: cobra.ExactArgs(1),
	}
	p := newObjectPrinter(cmd, "created")
	cmd.Flags().StringVarP(&clusterQueue, "clusterqueue", "c", "", "The cluster queue name which will be associated with the local queue (required).")
	cmd.Flags().BoolVarP(&ignoreUnknown, "ignore-unknown-cq", "i", false, "Ignore unknown cluster queue.")
	_ = cmd.MarkFlagRequired("clusterqueue")
	addDryRunFlag(cmd, &dry)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if clusterQueue == "" {
			return fmt.Errorf("--clusterqueue must not be empty")
		}
		d, err := parseDryRun(dry)
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		if !ignoreUnknown {
			if err := s.client.Get(cmd.Context(), client.ObjectKey{Name: clusterQueue}, &kueue.ClusterQueue{}); err != nil {
				return fmt.Errorf("--clusterqueue %s: %w (use --ignore-unknown-cq to create the LocalQueue anyway)", clusterQueue, err)
			}
		}
		lq := &kueue.LocalQueue{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: "LocalQueue"},
			ObjectMeta: metav1.ObjectMeta{Name: args[0], Namespace: s.namespace},
			Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(clusterQueue)},
		}
		return createObject(cmd.Context(), k, s, p, d, lq)
	}
	return cmd
}

func newCreateResourceFlavorCommand(k *kit) *cobra.Command {
	var nodeLabels map[string]string
	var taints, tolerations []string
	var dry string
	cmd := &cobra.Command{
		Use:                   "resourceflavor NAME [--node-labels KEY=VALUE,...] [--node-taints KEY[=VALUE]:EFFECT,...] [--tolerations KEY[=VALUE][:EFFECT]|:EFFECT,...] [--dry-run STRATEGY]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"rf"},
		Short:                 "Creates a resource flavor",
		Long:                  "Creates a ResourceFlavor with the given name.",
		Example: `  # Create a ResourceFlavor
  kubectl kuota create resourceflavor default-flavor

  # With node labels, node taints and tolerations
  kubectl kuota create resourceflavor gpu --node-labels cloud.example.com/accelerator=a100 \
    --node-taints gpu=true:NoSchedule --tolerations gpu=true:NoSchedule`,
		Args: cobra.ExactArgs(1),
	}
	p := newObjectPrinter(cmd, "created")
	cmd.Flags().StringToStringVar(&nodeLabels, "node-labels", nil, "Labels that associate the ResourceFlavor with Nodes that have the same labels.")
	cmd.Flags().StringSliceVar(&taints, "node-taints", nil, "Taints that the nodes associated with this ResourceFlavor have.")
	cmd.Flags().StringSliceVar(&tolerations, "tolerations", nil, "Extra tolerations that will be added to the pods admitted in the quota associated with this resource flavor.")
	addDryRunFlag(cmd, &dry)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		rf := &kueue.ResourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: "ResourceFlavor"},
			ObjectMeta: metav1.ObjectMeta{Name: args[0]},
			Spec:       kueue.ResourceFlavorSpec{NodeLabels: nodeLabels},
		}
		var err error
		if rf.Spec.NodeTaints, err = parseTaints(taints); err != nil {
			return err
		}
		if rf.Spec.Tolerations, err = parseTolerations(tolerations); err != nil {
			return err
		}
		d, err := parseDryRun(dry)
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		return createObject(cmd.Context(), k, s, p, d, rf)
	}
	return cmd
}
