// Package kubectl holds the commands of Kueue's kubectl plugin (kueuectl),
// reimplemented for Kuota: create, list, stop, resume, delete, version and
// the pass-through of get, describe, edit, patch and delete to kubectl. They
// keep kueuectl's names, aliases, flags and output columns so that scripts
// written for `kubectl kueue` work with `kubectl kuota`. AddCommands adds
// them to the kuota root command; each command family lives in its own file.
package kubectl

import (
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Options is what the commands take from their caller: streams, the clock
// that ages are measured with, the version to print and where kubectl is.
// Zero fields get defaults (see withDefaults).
type Options struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Now is the time ages and execution times are measured against.
	Now func() time.Time
	// ClientVersion is printed by `version`; empty means the binary's
	// module version.
	ClientVersion string
	// KubectlPath is the kubectl binary the pass-through commands run;
	// empty means the one found on PATH.
	KubectlPath string
}

func (o Options) withDefaults() Options {
	if o.In == nil {
		o.In = eofReader{}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Err == nil {
		o.Err = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ClientVersion == "" {
		o.ClientVersion = buildVersion()
	}
	return o
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// buildVersion is the kuota module's version as the Go toolchain embedded it.
func buildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// AddCommands adds kueuectl's commands to root. Every command that talks to
// the API server takes kubectl's connection flags (--kubeconfig, --context,
// --namespace/-n, --server, --token, ...).
func AddCommands(root *cobra.Command, o Options) {
	o = o.withDefaults()
	k := &kit{opts: o, flags: genericclioptions.NewConfigFlags(true)}
	verbs := []*cobra.Command{
		newCreateCommand(k), newListCommand(k), newStopCommand(k), newResumeCommand(k),
		newDeleteCommand(k), newVersionCommand(k), newWhyCommand(k), newTopCommand(k),
	}
	for _, v := range verbs {
		k.flags.AddFlags(v.PersistentFlags())
	}
	root.AddCommand(verbs...)
	root.AddCommand(newPassThroughCommands(k)...)
}

// kit is what the commands share: options and connection flags.
type kit struct {
	opts  Options
	flags *genericclioptions.ConfigFlags
}

// session is a connection to the API server, made when a command runs.
type session struct {
	config    *rest.Config
	client    client.Client
	clientset kubernetes.Interface
	// namespace is the one of --namespace or of the kubeconfig context.
	namespace string
	// explicitNamespace is true when --namespace was given.
	explicitNamespace bool
}

// connect reads the connection flags and builds the clients.
func (k *kit) connect() (*session, error) {
	cfg, err := k.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	ns, explicit, err := k.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the namespace of the kubeconfig: %w", err)
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	mapper, err := k.flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("building the REST mapper: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	return &session{config: cfg, client: c, clientset: cs, namespace: ns, explicitNamespace: explicit}, nil
}

// newScheme has the built-in kinds and Kueue's.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	return scheme, nil
}
