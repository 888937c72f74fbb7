package demo

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
)

// Paths inside a checkout of Kuota.
const (
	CRDDir    = "config/crd/bases"
	SetupFile = "config/samples/demo-setup.yaml"
)

// Node groups of the demo cluster: gpuNodes nodes per GPU kind, each with
// gpusPerNode GPUs and room for every pod the demo runs on them.
const (
	gpuNodes    = 2
	gpusPerNode = 8
	nodeCPU     = "64"
	nodeMemory  = "256Gi"
	// GPULabel is the node label the flavors of the sample setup select.
	GPULabel = "gpu"
)

// GPUKinds are the GPU node groups, also the flavors of the sample setup.
var GPUKinds = []string{"a100", "v100"}

// ClusterOptions turns base (name, folders, port) into the demo's cluster:
// no default node group, one group of fake GPU nodes per GPU kind.
func ClusterOptions(base devcluster.Options) devcluster.Options {
	o := base
	o.Nodes = 0
	o.NodeCPU = resource.MustParse(nodeCPU)
	o.NodeMemory = resource.MustParse(nodeMemory)
	o.NodeGPUs = 0
	o.NodeLabels = nil
	o.NodeGroups = nil
	for _, kind := range GPUKinds {
		o.NodeGroups = append(o.NodeGroups, devcluster.NodeGroup{
			Name: kind, Count: gpuNodes, Labels: map[string]string{GPULabel: kind},
			Resources: corev1.ResourceList{GPUResource: *resource.NewQuantity(gpusPerNode, resource.DecimalSI)},
		})
	}
	return o
}

// CapacityGPUs is the number of GPUs of the demo cluster.
func CapacityGPUs() int64 { return int64(len(GPUKinds) * gpuNodes * gpusPerNode) }

// newClient connects to the cluster of a kubeconfig with the scheme of
// Kubernetes' types and Kuota's.
func newClient(kubeconfig string) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "kuota-demo"
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	return c, nil
}

// kubectl runs the cluster's kubectl; its output goes into the error.
func kubectl(ctx context.Context, bin, kubeconfig string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// installCRDs applies Kuota's CRDs server-side and waits until they serve.
func installCRDs(ctx context.Context, kubectlBin, kubeconfig, root string) error {
	if err := kubectl(ctx, kubectlBin, kubeconfig, "apply", "--server-side", "--force-conflicts",
		"-f", filepath.Join(root, CRDDir)); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	if err := kubectl(ctx, kubectlBin, kubeconfig, "wait", "--for", "condition=Established",
		"--timeout", "60s", "crd", "--all"); err != nil {
		return fmt.Errorf("waiting for the CRDs: %w", err)
	}
	return nil
}

// applySetup applies the sample queue setup (through Kuota's webhooks, so
// it is validated) and waits until every team's ClusterQueue is active.
func applySetup(ctx context.Context, c client.Client, kubectlBin, kubeconfig, root string, timeout time.Duration) error {
	if err := kubectl(ctx, kubectlBin, kubeconfig, "apply", "--server-side", "--force-conflicts",
		"-f", filepath.Join(root, SetupFile)); err != nil {
		return fmt.Errorf("applying %s: %w", SetupFile, err)
	}
	return poll(ctx, timeout, func(ctx context.Context) error {
		for _, team := range Teams {
			var cq kueue.ClusterQueue
			if err := c.Get(ctx, types.NamespacedName{Name: team.ClusterQueue}, &cq); err != nil {
				return err
			}
			if c := apimeta.FindStatusCondition(cq.Status.Conditions, kueue.ClusterQueueActive); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("ClusterQueue %s is not active: %v", cq.Name, c)
			}
		}
		return nil
	})
}

// probeJob is a Job of a user of Kuota: with a queue name, not suspended.
func probeJob() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: metav1.NamespaceDefault, GenerateName: "kuota-demo-probe-",
			Labels: map[string]string{QueueNameLabel: "probe"},
		},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "probe", Image: "busybox"}},
		}}},
	}
}

// webhooksWork creates a probe Job as a server-side dry run: the manager's
// webhooks work when it comes back suspended.
func webhooksWork(ctx context.Context, c client.Client) error {
	j := probeJob()
	if err := c.Create(ctx, j, client.DryRunAll); err != nil {
		return fmt.Errorf("dry-run Job: %w", err)
	}
	if !ptr.Deref(j.Spec.Suspend, false) {
		return fmt.Errorf("a dry-run Job with label %s came back not suspended: Kuota's Job webhook is not registered", QueueNameLabel)
	}
	return nil
}

// deleteJobs deletes the demo's Jobs (and, through garbage collection,
// their pods and Workloads) in the teams' namespaces.
func deleteJobs(ctx context.Context, c client.Client) error {
	for _, team := range Teams {
		err := c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(team.Namespace),
			client.MatchingLabels{DemoLabel: "true"}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apimeta.IsNoMatchError(err) {
			return fmt.Errorf("deleting the Jobs in %s: %w", team.Namespace, err)
		}
	}
	return nil
}

// waitGone waits until no object of the list's kind is left in the teams'
// namespaces (with the demo label when labelled).
func waitGone(ctx context.Context, c client.Client, list client.ObjectList, labelled bool, timeout time.Duration) error {
	return poll(ctx, timeout, func(ctx context.Context) error {
		var left []string
		for _, team := range Teams {
			opts := []client.ListOption{client.InNamespace(team.Namespace)}
			if labelled {
				opts = append(opts, client.MatchingLabels{DemoLabel: "true"})
			}
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			items, err := apimeta.ExtractList(list)
			if err != nil {
				return err
			}
			for _, it := range items {
				if o, ok := it.(client.Object); ok {
					left = append(left, o.GetNamespace()+"/"+o.GetName())
				}
			}
		}
		if len(left) > 0 {
			slices.Sort(left)
			return fmt.Errorf("%d left: %s", len(left), strings.Join(left[:min(len(left), 5)], ", "))
		}
		return nil
	})
}

// permanentError ends a poll at once.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// poll calls check every quarter second until it returns nil or a
// permanentError, the timeout passes (the error wraps check's last error)
// or ctx ends.
func poll(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		last := check(ctx)
		if last == nil {
			return nil
		}
		if p, ok := last.(permanentError); ok {
			return p.error
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("not done after %s: %w", timeout, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}
