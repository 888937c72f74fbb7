package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kuota-dev/kuota/internal/certs"
)

// FrontProxyClientName is the common name of the client certificate
// kube-apiserver presents to aggregated API servers.
const FrontProxyClientName = "front-proxy-client"

// configureAggregation turns kube-apiserver's aggregation layer on: a
// front-proxy CA and client certificate written to dir, the request-header
// flags that tell aggregated servers who the caller is, and routing to
// endpoints (a test control plane has no kube-proxy to reach Service IPs).
func configureAggregation(api *envtest.APIServer, dir string) error {
	now := time.Now()
	ca, err := certs.NewCA(now, 365*24*time.Hour)
	if err != nil {
		return fmt.Errorf("front-proxy CA: %w", err)
	}
	client, err := certs.NewClient(ca, FrontProxyClientName, now, 365*24*time.Hour)
	if err != nil {
		return fmt.Errorf("front-proxy client certificate: %w", err)
	}
	files := map[string][]byte{"front-proxy-ca.crt": ca.CertPEM, "front-proxy-client.crt": client.CertPEM, "front-proxy-client.key": client.KeyPEM}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return fmt.Errorf("writing front-proxy certificates: %w", err)
		}
	}
	args := api.Configure()
	args.Set("requestheader-client-ca-file", filepath.Join(dir, "front-proxy-ca.crt"))
	args.Set("requestheader-allowed-names", FrontProxyClientName)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", filepath.Join(dir, "front-proxy-client.crt"))
	args.Set("proxy-client-key-file", filepath.Join(dir, "front-proxy-client.key"))
	args.Set("enable-aggregator-routing", "true")
	return nil
}
