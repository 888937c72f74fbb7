// Package framework starts a real kube-apiserver and etcd (controller-runtime's
// envtest, with binaries built from source into .cache/bin), installs Kuota's
// CRDs and hands tests a client. Integration test packages share one
// environment per package through Start and Stop in TestMain.
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/paths"
)

// Env is a running control plane with Kuota's CRDs installed.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
}

// NewScheme returns a scheme with the built-in kinds, CRDs and Kuota's API.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, kueue.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	return scheme, nil
}

// Start launches etcd and kube-apiserver and installs the CRDs from
// config/crd/bases. It fails with a clear message when the binaries are missing.
func Start() (*Env, error) { return StartWithCRDs() }

// StartWithCRDs is Start that also installs the CRDs of the given folders
// (another project's, taken from the module cache).
func StartWithCRDs(extra ...string) (*Env, error) {
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
	// KUBEBUILDER_ASSETS would override BinaryAssetsDirectory; keep them equal.
	if err := os.Setenv("KUBEBUILDER_ASSETS", bin); err != nil {
		return nil, fmt.Errorf("setting KUBEBUILDER_ASSETS: %w", err)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Env{env: env, Config: cfg, Client: c, Scheme: scheme}, nil
}

// Stop shuts the control plane down.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	return e.env.Stop()
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
func RunMain(m interface{ Run() int }, env **Env) int { return RunMainWithCRDs(m, env) }

// RunMainWithCRDs is RunMain with the CRDs of extra folders installed.
func RunMainWithCRDs(m interface{ Run() int }, env **Env, extra ...string) int {
	e, err := StartWithCRDs(extra...)
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
