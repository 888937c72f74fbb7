// Package install tests the install bundle (dist/install.yaml, built from
// config/default by `make dist`) against a real kube-apiserver that starts
// empty: one `kubectl apply --server-side` installs everything, a
// server-side dry run of it again succeeds, and the installed objects are
// wired together (names, namespace, Service references, Configuration,
// least-privilege RBAC).
package install

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var (
	// kubeClient reaches the API server as its administrator, with
	// restConfig.
	kubeClient client.Client
	restConfig *rest.Config
	// kubeconfig is a file for kubectl.
	kubeconfig string
	// kubectlBin is the kubectl built into .cache/bin.
	kubectlBin string
	// repoRoot is the checkout.
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := paths.ToolsBin()
	if err == nil {
		repoRoot, err = paths.RepoRoot()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "install: "+err.Error())
		return 1
	}
	kubectlBin = filepath.Join(bin, "kubectl")
	for _, name := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			fmt.Fprintf(os.Stderr, "install: %s is missing from %s: run 'make tools' first\n", name, bin)
			return 1
		}
	}
	scheme, err := framework.NewScheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, "install: "+err.Error())
		return 1
	}
	// An empty API server: the bundle brings its own CRDs.
	env := &envtest.Environment{BinaryAssetsDirectory: bin, Scheme: scheme, ControlPlaneStartTimeout: 60 * time.Second}
	if err := os.Setenv("KUBEBUILDER_ASSETS", bin); err != nil {
		fmt.Fprintln(os.Stderr, "install: "+err.Error())
		return 1
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "install: starting the control plane: "+err.Error())
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "install: stopping the control plane: "+err.Error())
		}
	}()
	restConfig = cfg
	if kubeClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, "install: "+err.Error())
		return 1
	}
	dir, err := os.MkdirTemp("", "kuota-install-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "install: "+err.Error())
		return 1
	}
	defer os.RemoveAll(dir)
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "install: "+err.Error())
		return 1
	}
	return m.Run()
}

// kubectl runs the built kubectl against the test API server and returns
// its standard output.
func kubectl(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %v: %v\n%s%s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// managerLog holds what managers run by the tests log.
var managerLog syncBuffer

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(&managerLog)))
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
