package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/localwebhook"
	"github.com/kuota-dev/kuota/internal/paths"
)

// jobSetController is JobSet's own controller (built from the
// sigs.k8s.io/jobset module into the tools folder by `make tools`),
// running as a process next to the cluster. It serves its webhooks on
// 127.0.0.1 with a loopback certificate the harness issues (its internal
// certificate management, which needs a Service and a Secret in a
// cluster, is off), and the harness registers them with the API server.
type jobSetController struct {
	cmd  *exec.Cmd
	done chan error
	// skip says why JobSet tests skip ("" when the controller runs).
	skip string
}

// jobSetControllerBin is the controller's binary name in the tools folder.
const jobSetControllerBin = "jobset-controller"

// startJobSet installs the JobSet CRD and starts the JobSet controller
// when its binary is built; otherwise it records why JobSet tests skip.
func (h *harness) startJobSet(ctx context.Context, toolsBin, root, kubectl, kubeconfig string) error {
	bin := filepath.Join(toolsBin, jobSetControllerBin)
	if _, err := os.Stat(bin); err != nil {
		h.jobSet.skip = fmt.Sprintf("%s is not built (run `make tools`): %v", jobSetControllerBin, err)
		return nil
	}
	dir, err := paths.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		return err
	}
	crds := filepath.Join(dir, "config", "components", "crd", "bases")
	for _, args := range [][]string{
		{"apply", "--server-side", "-f", crds},
		{"wait", "--for", "condition=Established", "--timeout", "60s", "crd/jobsets.jobset.x-k8s.io"},
	} {
		if out, err := kubectlTries(ctx, kubectl, kubeconfig, args...); err != nil {
			return fmt.Errorf("installing the JobSet CRD (kubectl %s): %v\n%s", args[0], err, out)
		}
	}
	certDir := filepath.Join(h.tmp, "jobset-certs")
	bundle, err := certs.EnsureDir(certDir, certs.Spec{Hosts: localwebhook.CertificateHosts}, time.Now())
	if err != nil {
		return fmt.Errorf("issuing the JobSet webhook certificate: %w", err)
	}
	port := freePort()
	config := filepath.Join(h.tmp, "jobset-config.yaml")
	body := fmt.Sprintf(`apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
internalCertManagement:
  enable: false
webhook:
  host: %s
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
`, localwebhook.Host, port, certDir)
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(h.tmp, "jobset-controller.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--config", config, "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address", "0", "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", freePort()), "--zap-devel=false")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", jobSetControllerBin, err)
	}
	h.jobSet.cmd, h.jobSet.done = cmd, make(chan error, 1)
	go func() { h.jobSet.done <- cmd.Wait(); log.Close() }()
	if err := h.registerJobSetWebhooks(ctx, port, bundle); err != nil {
		return err
	}
	return h.waitJobSetWebhook(ctx)
}

// registerJobSetWebhooks registers JobSet's defaulting and validating
// webhooks (its pod webhooks serve exclusive placement only, unused here).
func (h *harness) registerJobSetWebhooks(ctx context.Context, port int, bundle []byte) error {
	rule := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{jobsetapi.GroupVersion.Group}, APIVersions: []string{jobsetapi.GroupVersion.Version}, Resources: []string{"jobsets"}}}}
	}
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://%s:%d%s", localwebhook.Host, port, path)), CABundle: bundle}
	}
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	name := "jobset-e2e"
	objs := []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "mjobset.jobset.x-k8s.io", ClientConfig: cc("/mutate-jobset-x-k8s-io-v1alpha2-jobset"),
				Rules: rule(admissionregistrationv1.Create), FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "vjobset.jobset.x-k8s.io", ClientConfig: cc("/validate-jobset-x-k8s-io-v1alpha2-jobset"),
				Rules: rule(admissionregistrationv1.Create, admissionregistrationv1.Update), FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}},
	}
	for _, o := range objs {
		if err := h.client.Create(ctx, o); err != nil {
			return fmt.Errorf("registering the JobSet webhooks: %w", err)
		}
	}
	return nil
}

// waitJobSetWebhook waits until a dry-run JobSet comes back defaulted by
// JobSet's webhook.
func (h *harness) waitJobSetWebhook(ctx context.Context) error {
	var last error
	for ctx.Err() == nil {
		select {
		case err := <-h.jobSet.done:
			return fmt.Errorf("%s exited: %v (log in %s)", jobSetControllerBin, err, filepath.Join(h.tmp, "jobset-controller.log"))
		default:
		}
		js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "probe-"},
			Spec: jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "w", Replicas: 1, Template: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}}}
		last = h.client.Create(ctx, js, client.DryRunAll)
		if last == nil && js.Spec.Network != nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the JobSet controller's webhooks did not start working: %v", last)
}

// stop ends the JobSet controller.
func (c *jobSetController) stop() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
	}
}

// framework is the JobSet entry of the manager's integrations.frameworks
// list (", <name>"), empty when the controller does not run.
func (c *jobSetController) framework() string {
	if c.cmd == nil {
		return ""
	}
	return fmt.Sprintf(", %q", jobset.FrameworkName)
}

// kubectlTries runs kubectl, again up to three times a second apart when
// it fails: `kubectl wait` on a CRD the API server has not yet given a
// status fails at once (".status.conditions accessor error") instead of
// waiting.
func kubectlTries(ctx context.Context, kubectl, kubeconfig string, args ...string) ([]byte, error) {
	var out []byte
	var err error
	for try := 0; try < 4; try++ {
		if try > 0 {
			time.Sleep(time.Second)
		}
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		if out, err = cmd.CombinedOutput(); err == nil || ctx.Err() != nil {
			return out, err
		}
	}
	return out, err
}
