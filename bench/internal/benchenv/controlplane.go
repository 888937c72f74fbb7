// Package benchenv runs what a benchmark measures against: a real
// kube-apiserver and etcd (controller-runtime's envtest, with the binaries
// built into .cache/bin), tuned for load, and the Kuota manager as a
// separate process so that its CPU time and memory are its own.
//
// The API server allows many more requests in flight than its defaults,
// and writes an audit log of the manager's writes only: the manager
// authenticates as its own user, and the audit policy logs that user's
// create, update, patch and delete requests at Metadata level (one line per
// completed request). Counting lines by resource and subresource gives the
// manager's API writes per kind, independent of how the manager counts.
package benchenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kuota-dev/kuota/bench/internal/procstat"
)

// ManagerUser is the user the manager authenticates as.
const ManagerUser = "kuota-manager"

// ClientUser is the user an external client authenticates as.
const ClientUser = "bench-client"

// ManagerNamespace is the manager's namespace (the Configuration's
// default), where its webhook certificate rotator keeps its Secret. No
// webhook configuration is installed: API requests do not go through the
// manager's webhooks, but the manager is only ready once its webhook
// server has certificates.
const ManagerNamespace = "kueue-system"

// auditPolicy logs the manager's writes at Metadata level and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + ManagerUser + `"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// ControlPlaneOptions configure the control plane.
type ControlPlaneOptions struct {
	// ToolsBin holds etcd and kube-apiserver.
	ToolsBin string
	// CRDs is the folder of CRD manifests to install.
	CRDs string
	// Dir receives the audit policy and log.
	Dir    string
	Scheme *runtime.Scheme
	// MaxInflight and MaxMutatingInflight raise the API server's limits.
	MaxInflight, MaxMutatingInflight int
}

// ControlPlane is a running API server and etcd.
type ControlPlane struct {
	env *envtest.Environment
	// Config is an administrator's connection.
	Config *rest.Config
	// ManagerKubeconfig authenticates as ManagerUser (a cluster admin).
	ManagerKubeconfig []byte
	// ClientKubeconfig authenticates as ClientUser (a cluster admin), for
	// clients run beside the manager (kuota-bench --client).
	ClientKubeconfig []byte
	// AuditLog is the path of the audit log.
	AuditLog string
	// APIServerPID and EtcdPID are the processes' ids (0 if not found).
	APIServerPID, EtcdPID int
}

// StartControlPlane starts etcd and kube-apiserver and installs the CRDs.
func StartControlPlane(o ControlPlaneOptions) (*ControlPlane, error) {
	policy := filepath.Join(o.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing audit policy: %w", err)
	}
	cp := &ControlPlane{AuditLog: filepath.Join(o.Dir, "audit.log")}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    o.ToolsBin,
		CRDDirectoryPaths:        []string{o.CRDs},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   o.Scheme,
		ControlPlaneStartTimeout: 60 * time.Second,
	}
	// KUBEBUILDER_ASSETS would override BinaryAssetsDirectory; keep them equal.
	if err := os.Setenv("KUBEBUILDER_ASSETS", o.ToolsBin); err != nil {
		return nil, fmt.Errorf("setting KUBEBUILDER_ASSETS: %w", err)
	}
	// The API server's own log, for what the figures do not show (watchers
	// it closed, slow requests).
	apiLog, err := os.Create(filepath.Join(o.Dir, "apiserver.log"))
	if err != nil {
		return nil, fmt.Errorf("creating the API server's log: %w", err)
	}
	api := env.ControlPlane.GetAPIServer()
	api.Out, api.Err = apiLog, apiLog
	env.ControlPlane.GetAPIServer().Configure().
		Set("max-requests-inflight", fmt.Sprint(o.MaxInflight)).
		Set("max-mutating-requests-inflight", fmt.Sprint(o.MaxMutatingInflight)).
		Set("audit-policy-file", policy).
		Set("audit-log-path", cp.AuditLog).
		Set("audit-log-format", "json").
		Set("audit-log-maxsize", "0")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	cp.env, cp.Config = env, cfg
	user, err := env.ControlPlane.AddUser(envtest.User{Name: ManagerUser, Groups: []string{"system:masters"}}, nil)
	if err == nil {
		cp.ManagerKubeconfig, err = user.KubeConfig()
	}
	if err == nil {
		user, err = env.ControlPlane.AddUser(envtest.User{Name: ClientUser, Groups: []string{"system:masters"}}, nil)
	}
	if err == nil {
		cp.ClientKubeconfig, err = user.KubeConfig()
	}
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("provisioning the manager's and the client's users: %w", err)
	}
	if err := createNamespace(cfg, o.Scheme, ManagerNamespace); err != nil {
		_ = env.Stop()
		return nil, err
	}
	cp.APIServerPID = child("kube-apiserver")
	cp.EtcdPID = child("etcd")
	return cp, nil
}

func createNamespace(cfg *rest.Config, scheme *runtime.Scheme, name string) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

func child(name string) int {
	pids, err := procstat.Children(os.Getpid(), name)
	if err != nil || len(pids) != 1 {
		return 0
	}
	return pids[0]
}

// Stop stops the API server and etcd.
func (c *ControlPlane) Stop() error {
	if c == nil || c.env == nil {
		return nil
	}
	if err := c.env.Stop(); err != nil {
		return fmt.Errorf("stopping control plane: %w", err)
	}
	return nil
}
