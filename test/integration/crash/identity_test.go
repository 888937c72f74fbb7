package crash

import (
	"context"
	"net/url"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The replicas act as the install bundle's ServiceAccount (impersonated
// through their kubeconfig), bound to the bundle's ClusterRoles. The
// bundle's leader-election Role is applied in the Lease's namespace here
// (default): in kueue-system the replicas would find their namespace and
// run the webhooks, which the crash test does not exercise.

// leaseNamespace is where the replicas' Lease lives (managerConfig).
const leaseNamespace = "default"

// installManagerIdentity binds the manager's ServiceAccount as the bundle
// does, its leader-election Role in leaseNamespace.
func installManagerIdentity(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := framework.ApplyBundleDocuments(ctx, env.Client, "ClusterRole", "ClusterRoleBinding"); err != nil {
		t.Fatal(err)
	}
	objs, err := framework.BundleDocuments("Role", "RoleBinding")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetName() != "kueue-leader-election-role" && o.GetName() != "kueue-leader-election-rolebinding" {
			continue
		}
		o.SetNamespace(leaseNamespace)
		if err := env.Client.Patch(ctx, o, client.Apply, client.FieldOwner("kuota-tests"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
	}
}

// managerKubeconfig is the test API server's kubeconfig acting as the
// manager's ServiceAccount, reaching the server at addr (the proxy of
// drops_test.go; the certificate it presents is the server's own).
func managerKubeconfig(t *testing.T, addr string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(env.KubeConfig())
	if err != nil {
		t.Fatal(err)
	}
	as := framework.AsManager(env.Config).Impersonate
	for _, a := range cfg.AuthInfos {
		a.Impersonate, a.ImpersonateGroups = as.UserName, as.Groups
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		u.Host = addr
		c.Server = u.String()
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
