package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/sim"
)

// traceFlags are the flags of `trace export`.
type traceFlags struct {
	kubeconfig, output, queues, namespace string
}

// newTraceCommand builds `trace`; connect is nil outside tests.
func newTraceCommand(prog string, env Env, connect connectFunc) *cobra.Command {
	if connect == nil {
		connect = func(kubeconfig string) (client.Reader, error) { return newKueueReader(env, kubeconfig) }
	}
	cmd := &cobra.Command{Use: "trace", Short: "Export a cluster's workloads as a trace for kuota simulate"}
	f := traceFlags{}
	export := &cobra.Command{
		Use:   "export",
		Short: "Write the Workloads of a cluster as a trace (and its queues as YAML)",
		Long: `Read the Workloads of a cluster and write them as a trace for kuota simulate:
creation time (from the first one), LocalQueue, priority, pod sets with each
pod's requests, and runtime (from the last admission to the end; still
running: until now; never ran: the median runtime of its LocalQueue).
With --queues, also write the cluster's queue configuration (ResourceFlavors,
Cohorts, ClusterQueues, LocalQueues, WorkloadPriorityClasses) as YAML, to
edit and try with kuota simulate --queues.`,
		Example: fmt.Sprintf(`  %[1]s trace export --output last-week.trace --queues queues.yaml
  %[1]s simulate --queues new-queues.yaml --trace last-week.trace`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := connect(f.kubeconfig)
			if err != nil {
				return err
			}
			return runTraceExport(cmd, c, f)
		},
	}
	fl := export.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVarP(&f.output, "output", "o", "", "trace file to write (default: standard output)")
	fl.StringVar(&f.queues, "queues", "", "also write the queue configuration to this YAML file")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "only the Workloads of this namespace")
	cmd.AddCommand(export)
	return cmd
}

func runTraceExport(cmd *cobra.Command, c client.Reader, f traceFlags) error {
	ctx := cmd.Context()
	var wls kueue.WorkloadList
	opts := []client.ListOption{}
	if f.namespace != "" {
		opts = append(opts, client.InNamespace(f.namespace))
	}
	if err := c.List(ctx, &wls, opts...); err != nil {
		return fmt.Errorf("listing Workloads: %w", err)
	}
	trace := sim.TraceFromWorkloads(wls.Items, time.Now())
	var out io.Writer = cmd.OutOrStdout()
	if f.output != "" {
		file, err := os.Create(f.output)
		if err != nil {
			return err
		}
		defer file.Close()
		out = file
	}
	if err := sim.WriteTrace(out, trace); err != nil {
		return err
	}
	if f.queues == "" {
		return nil
	}
	return writeQueues(cmd, c, f.queues)
}

// writeQueues writes the cluster's queue objects as a YAML stream
// (sim.WriteSetup), without status and server-set metadata.
func writeQueues(cmd *cobra.Command, c client.Reader, path string) error {
	ctx := cmd.Context()
	var (
		flavors    kueue.ResourceFlavorList
		cohorts    kueue.CohortList
		queues     kueue.ClusterQueueList
		locals     kueue.LocalQueueList
		priorities kueue.WorkloadPriorityClassList
	)
	for _, l := range []client.ObjectList{&flavors, &cohorts, &queues, &locals, &priorities} {
		if err := c.List(ctx, l); err != nil {
			return fmt.Errorf("listing %T: %w", l, err)
		}
	}
	s := &sim.Setup{}
	for i := range flavors.Items {
		s.Flavors = append(s.Flavors, clean(&flavors.Items[i]))
	}
	for i := range cohorts.Items {
		cohorts.Items[i].Status = kueue.CohortStatus{}
		s.Cohorts = append(s.Cohorts, clean(&cohorts.Items[i]))
	}
	for i := range queues.Items {
		queues.Items[i].Status = kueue.ClusterQueueStatus{}
		s.ClusterQueues = append(s.ClusterQueues, clean(&queues.Items[i]))
	}
	for i := range locals.Items {
		locals.Items[i].Status = kueue.LocalQueueStatus{}
		s.LocalQueues = append(s.LocalQueues, clean(&locals.Items[i]))
	}
	for i := range priorities.Items {
		s.Priorities = append(s.Priorities, clean(&priorities.Items[i]))
	}
	if len(s.Flavors)+len(s.Cohorts)+len(s.ClusterQueues)+len(s.LocalQueues)+len(s.Priorities) == 0 {
		return errors.New("the cluster has no queue objects")
	}
	if err := addTopology(ctx, c, s); err != nil {
		return err
	}
	var docs bytes.Buffer
	if err := sim.WriteSetup(&docs, s); err != nil {
		return err
	}
	return os.WriteFile(path, docs.Bytes(), 0o644)
}

// addTopology adds, when a flavor names a Topology, the Topologies and the
// nodes (their labels, taints, allocatable resources and Ready condition),
// so that a simulation places topology-aware workloads on the same nodes.
// Pods are not exported: in the simulation only the trace's workloads take
// the nodes' capacity.
func addTopology(ctx context.Context, c client.Reader, s *sim.Setup) error {
	if !slices.ContainsFunc(s.Flavors, func(f *kueue.ResourceFlavor) bool { return f.Spec.TopologyName != nil }) {
		return nil
	}
	var topologies kueue.TopologyList
	var nodes corev1.NodeList
	for _, l := range []client.ObjectList{&topologies, &nodes} {
		if err := c.List(ctx, l); err != nil {
			return fmt.Errorf("listing %T: %w", l, err)
		}
	}
	for i := range topologies.Items {
		s.Topologies = append(s.Topologies, clean(&topologies.Items[i]))
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		kept := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
			Spec:   corev1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable},
			Status: corev1.NodeStatus{Allocatable: n.Status.Allocatable}}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				kept.Status.Conditions = []corev1.NodeCondition{{Type: cond.Type, Status: cond.Status}}
			}
		}
		s.Nodes = append(s.Nodes, kept)
	}
	return nil
}

// clean drops the metadata the API server sets, so that the object can
// be applied again.
func clean[T client.Object](o T) T {
	o.SetManagedFields(nil)
	o.SetResourceVersion("")
	o.SetUID("")
	o.SetGeneration(0)
	o.SetCreationTimestamp(metav1.Time{})
	o.SetFinalizers(nil)
	return o
}
