package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/paths"
)

// harness is the running cluster and manager.
type harness struct {
	cluster devcluster.Options
	tmp     string
	// kubeconfig reaches the cluster (for the command-line tools).
	kubeconfig string
	// kubectl is the kubectl binary built for the cluster.
	kubectl string
	client  client.Client
	cs      kubernetes.Interface
	manager *exec.Cmd
	done    chan error
	// managerArgs run the manager again the same way after a kill
	// (restartManager): binary, then flags.
	managerArgs []string
	pods        *podWatcher
	stopPod     context.CancelFunc
	// jobSet is JobSet's controller, when its binary is built.
	jobSet jobSetController
	// healthPort serves the manager's /readyz.
	healthPort int
}

// Node groups of the e2e cluster: two pools with different labels.
const (
	onDemand = "on-demand"
	spot     = "spot"
	poolKey  = "pool"
)

func setUp(ctx context.Context, toolsBin, tmp string) (*harness, error) {
	root, err := paths.RepoRoot()
	if err != nil {
		return nil, err
	}
	managerBin := filepath.Join(tmp, "kuota-manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", managerBin, "./cmd/kuota-manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building kuota-manager: %v\n%s", err, out)
	}
	h := &harness{tmp: tmp}
	h.cluster = devcluster.Options{
		Name: fmt.Sprintf("e2e-%d", os.Getpid()), WorkDir: filepath.Join(tmp, "kwok"), ToolsBin: toolsBin,
		Port: freePort(), NodeCPU: resource.MustParse("8"), NodeMemory: resource.MustParse("32Gi"), PodsPerNode: 110,
		DisableQPSLimits: true, PodRuntime: 10 * time.Millisecond,
		NodeGroups: append([]devcluster.NodeGroup{
			{Name: onDemand, Count: 2, Labels: map[string]string{poolKey: onDemand}},
			{Name: spot, Count: 2, Labels: map[string]string{poolKey: spot}},
		}, tasNodeGroups()...),
	}
	res, err := devcluster.Up(ctx, h.cluster)
	if err != nil {
		return h, fmt.Errorf("starting the cluster: %w", err)
	}
	h.kubeconfig = res.Kubeconfig
	restCfg, err := clientcmd.BuildConfigFromFlags("", res.Kubeconfig)
	if err != nil {
		return h, err
	}
	restCfg.QPS, restCfg.Burst = 200, 400
	scheme, err := app.NewScheme()
	if err != nil {
		return h, err
	}
	if h.client, err = client.New(restCfg, client.Options{Scheme: scheme}); err != nil {
		return h, err
	}
	if h.cs, err = kubernetes.NewForConfig(restCfg); err != nil {
		return h, err
	}
	tools, err := devcluster.LocateTools(toolsBin)
	if err != nil {
		return h, err
	}
	h.kubectl = tools.Kubectl
	apply := exec.CommandContext(ctx, tools.Kubectl, "--kubeconfig", res.Kubeconfig, "apply", "--server-side",
		"-f", filepath.Join(root, "config", "crd", "bases"))
	if out, err := apply.CombinedOutput(); err != nil {
		return h, fmt.Errorf("installing the CRDs: %v\n%s", err, out)
	}
	if out, err := kubectlTries(ctx, tools.Kubectl, res.Kubeconfig, "wait", "--for", "condition=Established",
		"--timeout", "60s", "crd", "--all"); err != nil {
		return h, fmt.Errorf("waiting for the CRDs: %v\n%s", err, out)
	}
	if err := h.startJobSet(ctx, toolsBin, root, tools.Kubectl, res.Kubeconfig); err != nil {
		return h, err
	}
	managerConfig, err := h.managerKubeconfig(ctx)
	if err != nil {
		return h, err
	}
	if err := h.startManager(managerBin, managerConfig); err != nil {
		return h, err
	}
	if err := h.waitWebhooks(ctx); err != nil {
		return h, err
	}
	podCtx, cancel := context.WithCancel(context.Background())
	h.stopPod = cancel
	h.pods = watchPods(podCtx, h.cs, h.client)
	return h, nil
}

// startManager runs kuota-manager with its webhooks served locally.
func (h *harness) startManager(bin, kubeconfig string) error {
	config := filepath.Join(h.tmp, "config.yaml")
	h.healthPort = freePort()
	body := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection:
  leaderElect: false
health:
  healthProbeBindAddress: "127.0.0.1:%d"
metrics:
  bindAddress: "0"
webhook:
  port: %d
  certDir: %s
visibilityServer:
  bindPort: %d
integrations:
  frameworks: ["batch/job", "pod", "deployment", "statefulset"%s]
# Kueue's HAMi page: vGPU cores and memory are charged per GPU.
resources:
  transformations:
  - input: nvidia.com/gpucores
    strategy: Replace
    multiplyBy: nvidia.com/gpu
    outputs:
      nvidia.com/total-gpucores: "1"
  - input: nvidia.com/gpumem
    strategy: Replace
    multiplyBy: nvidia.com/gpu
    outputs:
      nvidia.com/total-gpumem: "1"
`, h.healthPort, freePort(), filepath.Join(h.tmp, "certs"), freePort(), h.jobSet.framework())
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return err
	}
	h.managerArgs = []string{bin, "--config", config, "--kubeconfig", kubeconfig, "--local-webhooks", "--zap-log-level", "info"}
	return h.launchManager()
}

// launchManager starts the manager process with managerArgs, its output
// appended to the log.
func (h *harness) launchManager() error {
	log, err := os.OpenFile(logPath(h.tmp), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	h.manager = exec.Command(h.managerArgs[0], h.managerArgs[1:]...)
	h.manager.Stdout, h.manager.Stderr = log, log
	if err := h.manager.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting kuota-manager: %w", err)
	}
	done := make(chan error, 1)
	cmd := h.manager
	go func() { done <- cmd.Wait(); log.Close() }()
	h.done = done
	return nil
}

// restartManager kills the manager (SIGKILL: no cleanup, as a crash or an
// OOM kill) and starts it again the same way (same kubeconfig, config and
// ports), then waits until it is ready and its webhooks answer. Tests of
// this package run one at a time, so no other test sees the gap.
func (h *harness) restartManager(ctx context.Context) error {
	if err := h.manager.Process.Kill(); err != nil {
		return fmt.Errorf("killing kuota-manager: %w", err)
	}
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("kuota-manager did not exit after SIGKILL")
	}
	if err := h.launchManager(); err != nil {
		return err
	}
	return h.waitWebhooks(ctx)
}

// waitWebhooks waits until the API server sends Jobs through the manager's
// webhook: a dry-run Job with a queue name comes back suspended.
func (h *harness) waitWebhooks(ctx context.Context) error {
	probe := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "probe-",
			Labels: map[string]string{jobframework.QueueNameLabel: "probe"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}
	var last error
	for ctx.Err() == nil {
		select {
		case err := <-h.done:
			return fmt.Errorf("kuota-manager exited: %v", err)
		default:
		}
		j := probe.DeepCopy()
		last = h.client.Create(ctx, j, client.DryRunAll)
		if last == nil && !ptr.Deref(j.Spec.Suspend, false) {
			last = fmt.Errorf("the dry-run Job was not suspended")
		}
		// Ready also means the API server converts v1beta1 through the
		// manager (registered after the admission webhooks).
		if last == nil {
			last = h.ready()
		}
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the manager's webhooks did not start working: %v", last)
}

// ready asks the manager's /readyz.
func (h *harness) ready() error {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", h.healthPort))
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("manager not ready: %s", body)
	}
	return nil
}

func (h *harness) tearDown() {
	if h.stopPod != nil {
		h.stopPod()
	}
	h.jobSet.stop()
	if h.manager != nil && h.manager.Process != nil {
		_ = h.manager.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.done:
		case <-time.After(30 * time.Second):
			_ = h.manager.Process.Kill()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := devcluster.Down(ctx, h.cluster); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: deleting the cluster:", err)
	}
}

// dumpLog copies the end of the manager's log.
func (h *harness) dumpLog(w io.Writer) {
	data, err := os.ReadFile(logPath(h.tmp))
	if err != nil {
		return
	}
	if len(data) > 20000 {
		data = data[len(data)-20000:]
	}
	fmt.Fprintf(w, "---- end of kuota-manager log ----\n%s\n", data)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
