// Package framework starts a real kube-apiserver and etcd (controller-runtime's
// envtest, with binaries built from source into .cache/bin), installs Kuota's
// CRDs and hands tests a client. Integration test packages share one
// environment per package through Start and Stop in TestMain. StartWith can
// keep the control plane's state in a folder, so that a test can restart
// kube-apiserver and etcd mid-run (the crash test does).
package framework

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/paths"
)

// Env is a running control plane with Kuota's CRDs installed.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
	// persistent: the control plane keeps its state across restarts.
	persistent bool
	// tmp is removed on Stop.
	tmp string
}

// NewScheme returns a scheme with what the manager's has (built-in kinds,
// Kuota's API, the job kinds, ProvisioningRequests) and CRDs.
func NewScheme() (*runtime.Scheme, error) {
	scheme, err := app.NewScheme()
	if err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	return scheme, nil
}

// Options tune StartWith. The zero value is what Start does.
type Options struct {
	// StateDir, when set, keeps etcd's data in StateDir/etcd and the API
	// server's certificates in StateDir/apiserver instead of temporary
	// folders removed on stop, so that RestartAPIServer and RestartEtcd
	// bring them back with the same data, port and credentials. The caller
	// owns the folder and removes it.
	StateDir string
	// Output, when set, receives what etcd and kube-apiserver print.
	Output io.Writer
	// ExtraCRDs are folders of other projects' CRDs to install too (taken
	// from the module cache).
	ExtraCRDs []string
	// Aggregation turns kube-apiserver's aggregation layer on (front-proxy
	// certificates, request-header flags, routing to endpoints), so that
	// APIServices served by a test manager (the pending-workloads API) are
	// reachable through it.
	Aggregation bool
}

// Start launches etcd and kube-apiserver and installs the CRDs from
// config/crd/bases. It fails with a clear message when the binaries are missing.
func Start() (*Env, error) { return StartWith(Options{}) }

// StartWithCRDs is Start that also installs the CRDs of the given folders
// (another project's, taken from the module cache).
func StartWithCRDs(extra ...string) (*Env, error) { return StartWith(Options{ExtraCRDs: extra}) }

// StartWith is Start with options.
func StartWith(o Options) (*Env, error) {
	extra := o.ExtraCRDs
	bin, err := paths.ToolsBin()
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run 'make tools' first: %w", name, bin, err)
		}
	}
	root, err := paths.RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		CRDDirectoryPaths:        append([]string{filepath.Join(root, "config", "crd", "bases")}, extra...),
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: 60 * time.Second,
	}
	if err := o.configure(env); err != nil {
		return nil, err
	}
	var tmp string
	if o.Aggregation {
		if tmp, err = os.MkdirTemp("", "kuota-aggregation-"); err != nil {
			return nil, fmt.Errorf("creating front-proxy certificate folder: %w", err)
		}
		if err := configureAggregation(env.ControlPlane.GetAPIServer(), tmp); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	// KUBEBUILDER_ASSETS would override BinaryAssetsDirectory; keep them equal.
	if err := os.Setenv("KUBEBUILDER_ASSETS", bin); err != nil {
		return nil, fmt.Errorf("setting KUBEBUILDER_ASSETS: %w", err)
	}
	e := &Env{env: env, Scheme: scheme, persistent: o.StateDir != "", tmp: tmp}
	noteRunning(e) // an interrupt while it starts stops what has started
	cfg, err := env.Start()
	if err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("starting envtest control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	e.Config, e.Client = cfg, c
	return e, nil
}

// configure applies the options to the environment before it starts.
func (o Options) configure(env *envtest.Environment) error {
	if o.StateDir != "" {
		etcdDir, certDir := filepath.Join(o.StateDir, "etcd"), filepath.Join(o.StateDir, "apiserver")
		for _, d := range []string{etcdDir, certDir} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("creating control-plane state folder: %w", err)
			}
		}
		env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
		env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
		// Stop in about 2 s instead of waiting up to a minute for open
		// watches: in-flight requests drain, then clients are told to retry.
		env.ControlPlane.APIServer.Configure().Set("shutdown-send-retry-after", "true")
	}
	if o.Output != nil {
		if env.ControlPlane.Etcd == nil {
			env.ControlPlane.Etcd = &envtest.Etcd{}
		}
		api := env.ControlPlane.GetAPIServer()
		env.ControlPlane.Etcd.Out, env.ControlPlane.Etcd.Err = o.Output, o.Output
		api.Out, api.Err = o.Output, o.Output
	}
	return nil
}

// RestartAPIServer stops kube-apiserver gracefully and starts it again on
// the same port with the same certificates; it returns once the new one is
// healthy. Clients reconnect by themselves. It needs Options.StateDir.
func (e *Env) RestartAPIServer() error {
	api := e.env.ControlPlane.APIServer
	if api == nil || api.CertDir == "" || !e.persistent {
		return fmt.Errorf("restarting kube-apiserver needs framework.Options.StateDir")
	}
	if err := api.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	if err := api.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}

// RestartEtcd stops etcd gracefully and starts it again on the same port
// with the same data; it returns once the new one is healthy. The API
// server keeps running and reconnects. It needs Options.StateDir.
func (e *Env) RestartEtcd() error {
	etcd := e.env.ControlPlane.Etcd
	if etcd == nil || !e.persistent {
		return fmt.Errorf("restarting etcd needs framework.Options.StateDir")
	}
	if err := etcd.Stop(); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	if err := etcd.Start(); err != nil {
		return fmt.Errorf("starting etcd again: %w", err)
	}
	return nil
}

// Stop shuts the control plane down.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	noteStopped(e)
	err := e.env.Stop()
	if e.tmp != "" {
		os.RemoveAll(e.tmp)
	}
	return err
}

// CreateNamespace creates a namespace with a generated name and returns it.
func (e *Env) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix + "-"
	if err := e.Client.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace: %w", err)
	}
	return ns.Name, nil
}

// RunMain is the body of an integration package's TestMain: it starts the
// environment, runs the tests and stops it.
func RunMain(m interface{ Run() int }, env **Env) int {
	return RunMainWith(m, env, Options{})
}

// RunMainWithCRDs is RunMain with the CRDs of extra folders installed.
func RunMainWithCRDs(m interface{ Run() int }, env **Env, extra ...string) int {
	return RunMainWith(m, env, Options{ExtraCRDs: extra})
}

// RunMainWith is RunMain with options for the environment.
func RunMainWith(m interface{ Run() int }, env **Env, o Options) int {
	e, err := StartWith(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: "+err.Error())
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "integration: stopping control plane: "+err.Error())
	}
	return code
}

// KubeConfig returns a kubeconfig file's content for the environment, for
// processes started by tests.
func (e *Env) KubeConfig() []byte { return e.env.KubeConfig }
