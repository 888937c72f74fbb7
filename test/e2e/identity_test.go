package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The manager runs under the identity the install bundle gives it: the
// bundle's ServiceAccount, bound to the bundle's roles, with a token from
// the TokenRequest API. A verb missing from the bundle's ClusterRole then
// fails these tests as it would fail a user's install.
//
// Local mode (--local-webhooks) does more than an installed manager: it
// registers its webhook configurations and the pending-workloads
// APIService with url client configs, points the Services at this host
// and probes conversion with dry-run creates. localModeRole grants that,
// and only that, on top of the bundle's roles.
const localModeRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kuota-e2e-local-mode
rules:
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]
  verbs: ["get", "create", "update", "delete"]
- apiGroups: ["apiregistration.k8s.io"]
  resources: ["apiservices"]
  verbs: ["get", "create", "update", "delete"]
- apiGroups: [""]
  resources: ["namespaces", "services"]
  verbs: ["get", "create", "update", "delete"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "create", "update", "delete"]
- apiGroups: ["kueue.x-k8s.io"]
  resources: ["clusterqueues", "multikueueclusters"]
  verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kuota-e2e-local-mode
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kuota-e2e-local-mode
subjects:
- kind: ServiceAccount
  name: kueue-controller-manager
  namespace: kueue-system
`

// managerKubeconfig installs the bundle's ServiceAccount and roles (and
// localModeRole) and writes a kubeconfig that acts as that account.
func (h *harness) managerKubeconfig(ctx context.Context) (string, error) {
	if err := framework.ApplyBundleDocuments(ctx, h.client, "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding"); err != nil {
		return "", err
	}
	apply := exec.CommandContext(ctx, h.kubectl, "--kubeconfig", h.kubeconfig, "apply", "--server-side", "-f", "-")
	apply.Stdin = strings.NewReader(localModeRole)
	if out, err := apply.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing the local mode's role: %v\n%s", err, out)
	}
	tr, err := h.cs.CoreV1().ServiceAccounts(framework.ManagerNamespace).CreateToken(ctx, framework.ManagerServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for the manager's service account: %w", err)
	}
	admin, err := clientcmd.LoadFromFile(h.kubeconfig)
	if err != nil {
		return "", err
	}
	cluster := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = cluster
	cfg.AuthInfos["manager"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["manager"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "manager"}
	cfg.CurrentContext = "manager"
	path := filepath.Join(h.tmp, "manager.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}

// refusals lists the lines of the manager's log where the API server's
// authorizer refused it something.
func (h *harness) refusals() []string {
	data, err := os.ReadFile(logPath(h.tmp))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(`forbidden: User \"system:serviceaccount:`)) {
			out = append(out, string(line))
		}
	}
	return out
}
