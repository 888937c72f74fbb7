package visibility

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
)

// The delegated authentication of an aggregated server trusts the
// front-proxy headers kube-apiserver adds when it forwards a request; it
// reads the CA that signs the proxy's client certificate from the
// extension-apiserver-authentication ConfigMap, which kube-apiserver fills
// when its aggregation layer is configured (--requestheader-client-ca-file).
// Without that key the library still watches for it and logs an error every
// few seconds for the life of the process. A cluster without it cannot
// forward requests to the pending-workloads API anyway, so the server then
// skips the lookup, keeps client-certificate authentication with the CA the
// ConfigMap does hold, and says so once.

const (
	authConfigMapNamespace = "kube-system"
	authConfigMapName      = "extension-apiserver-authentication"
	requestHeaderCAKey     = "requestheader-client-ca-file"
	clientCAKey            = "client-ca-file"
)

// lookupTimeout bounds the ConfigMap read at start-up.
const lookupTimeout = 10 * time.Second

// withoutFrontProxy reports why the server cannot authenticate forwarded
// requests ("" when it can, or when the ConfigMap could not be read: the
// library's own lookup then runs and reports its errors) and, in that case,
// configures authn not to look for the front-proxy CA. The cluster's client
// CA, if any, is written into dir for client-certificate authentication.
func withoutFrontProxy(ctx context.Context, cs kubernetes.Interface, authn *genericoptions.DelegatingAuthenticationOptions, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	cm, err := cs.CoreV1().ConfigMaps(authConfigMapNamespace).Get(ctx, authConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm, err = &corev1.ConfigMap{}, nil
	}
	if err != nil || cm.Data[requestHeaderCAKey] != "" {
		return "", nil
	}
	authn.SkipInClusterLookup = true
	if ca := cm.Data[clientCAKey]; ca != "" {
		path := filepath.Join(dir, "client-ca.crt")
		if err := os.WriteFile(path, []byte(ca), 0o600); err != nil {
			return "", fmt.Errorf("visibility server: writing the cluster's client CA: %w", err)
		}
		authn.ClientCert.ClientCA = path
	}
	return fmt.Sprintf("ConfigMap %s/%s has no %s: kube-apiserver's aggregation layer is not configured, so it cannot forward "+
		"requests to the pending-workloads API; the server accepts direct requests only (bearer tokens, client certificates)",
		authConfigMapNamespace, authConfigMapName, requestHeaderCAKey), nil
}
