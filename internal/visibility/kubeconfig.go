package visibility

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes cfg as a kubeconfig file in dir (private to the
// process): the generic server's delegated authentication and
// authorization read their client from a file, or from the in-cluster
// service account when there is none. Credential plugins (exec, auth
// providers) are not carried over; without a credential the file is not
// written and "" is returned, so the in-cluster account is used.
func writeKubeconfig(cfg *rest.Config, dir string) (string, error) {
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return "", nil
	}
	user := &clientcmdapi.AuthInfo{
		ClientCertificate: cfg.CertFile, ClientCertificateData: cfg.CertData,
		ClientKey: cfg.KeyFile, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken, TokenFile: cfg.BearerTokenFile,
		Username: cfg.Username, Password: cfg.Password,
		Impersonate: cfg.Impersonate.UserName, ImpersonateGroups: cfg.Impersonate.Groups,
	}
	cluster := &clientcmdapi.Cluster{
		Server: cfg.Host, CertificateAuthority: cfg.CAFile, CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName,
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cluster"] = cluster
	kc.AuthInfos["manager"] = user
	kc.Contexts["manager"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "manager"}
	kc.CurrentContext = "manager"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("writing the visibility server's kubeconfig: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("writing the visibility server's kubeconfig: %w", err)
	}
	return path, nil
}
