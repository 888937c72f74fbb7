package metricsauth

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// readerRole is the ClusterRole the install bundle ships for scrapers.
const readerRole = "kueue-metrics-reader"

// A metric Kuota always exports (set when the metrics are registered).
const alwaysThere = "kueue_build_info"

// TestMetricsEndpointRequiresAuthorizedToken runs a manager with secure
// metrics (the default) and reads /metrics without a token, with the
// token of a ServiceAccount that has no binding, and with the token of one
// bound to the bundle's reader role.
func TestMetricsEndpointRequiresAuthorizedToken(t *testing.T) {
	ctx := context.Background()
	installReaderRole(t, ctx)
	ns, err := env.CreateNamespace(ctx, "metricsauth")
	if err != nil {
		t.Fatal(err)
	}
	reader, stranger := serviceAccount(t, ctx, ns, "prometheus"), serviceAccount(t, ctx, ns, "stranger")
	bindReader(t, ctx, reader)
	readerToken, strangerToken := token(t, ctx, reader), token(t, ctx, stranger)

	metricsAddr, pprofPort := freeAddr(t, "127.0.0.1"), freePort(t)
	cfg, err := framework.ManagerConfig(func(c *configapi.Configuration) { c.PprofBindAddress = ":" + pprofPort })
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManagerWith(cfg, func(o *app.Options) {
		o.MetricsBindAddress = ptr.To(metricsAddr)
		o.SecureMetrics = nil // the default: HTTPS with authentication and authorization
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Error(err)
		}
	})

	url := "https://" + metricsAddr + "/metrics"
	// The manager serves a self-signed certificate.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test server
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "the metrics server answers", func() error {
		_, _, err := get(client, url, "")
		return err
	})

	t.Run("no token", func(t *testing.T) {
		expectStatus(t, client, url, "", http.StatusUnauthorized)
	})
	t.Run("invalid token", func(t *testing.T) {
		// The TokenReview reports an error for a token that is not one;
		// controller-runtime's filter answers 500 then, not 401.
		code, body, err := get(client, url, "not-a-token")
		if err != nil || code < 400 || strings.Contains(body, alwaysThere) {
			t.Errorf("GET %s with an invalid token: status %d, %v; want a refusal", url, code, err)
		}
	})
	t.Run("token without the reader role", func(t *testing.T) {
		expectStatus(t, client, url, strangerToken, http.StatusForbidden)
	})
	t.Run("token with the reader role", func(t *testing.T) {
		body := expectStatus(t, client, url, readerToken, http.StatusOK)
		if !strings.Contains(body, alwaysThere) {
			t.Errorf("the metrics page lacks %s:\n%.2000s", alwaysThere, body)
		}
	})
	t.Run("no plain HTTP", func(t *testing.T) {
		code, _, err := get(http.DefaultClient, "http://"+metricsAddr+"/metrics", readerToken)
		if err == nil && code == http.StatusOK {
			t.Error("metrics are served over plain HTTP")
		}
	})
	t.Run("pprof on loopback", func(t *testing.T) {
		checkPprofLoopbackOnly(t, pprofPort)
	})
}

// installReaderRole creates the reader ClusterRole as dist/install.yaml
// ships it.
func installReaderRole(t *testing.T, ctx context.Context) {
	t.Helper()
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "dist", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding dist/install.yaml: %v", err)
		}
		if u.GetKind() != "ClusterRole" || u.GetName() != readerRole {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, role); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("dist/install.yaml has no ClusterRole %s", readerRole)
}

func serviceAccount(t *testing.T, ctx context.Context, ns, name string) *corev1.ServiceAccount {
	t.Helper()
	sa := &corev1.ServiceAccount{}
	sa.Namespace, sa.Name = ns, name
	if err := env.Client.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	return sa
}

// bindReader binds the reader role to sa and waits until the API server's
// authorizer knows it: the manager caches a denial for a while, so the
// first scrape must not race the binding.
func bindReader(t *testing.T, ctx context.Context, sa *corev1.ServiceAccount) {
	t.Helper()
	b := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readerRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
	}
	b.GenerateName = "metrics-reader-"
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("system:serviceaccount:%s:%s", sa.Namespace, sa.Name)
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, user+" may get /metrics", func() error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}
		if err := env.Client.Create(ctx, sar); err != nil {
			return err
		}
		if !sar.Status.Allowed {
			return fmt.Errorf("not allowed: %s", sar.Status.Reason)
		}
		return nil
	})
}

func token(t *testing.T, ctx context.Context, sa *corev1.ServiceAccount) string {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := env.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("requesting a token for %s: %v", sa.Name, err)
	}
	if tr.Status.Token == "" {
		t.Fatalf("empty token for %s", sa.Name)
	}
	return tr.Status.Token
}

func get(c *http.Client, url, bearer string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func expectStatus(t *testing.T, c *http.Client, url, bearer string, want int) string {
	t.Helper()
	code, body, err := get(c, url, bearer)
	if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Errorf("GET %s: status %d, want %d; body:\n%.500s", url, code, want, body)
	}
	return body
}

// checkPprofLoopbackOnly checks that pprof (configured as ":port")
// answers on 127.0.0.1 and on no other address of this machine.
func checkPprofLoopbackOnly(t *testing.T, port string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "pprof answers on 127.0.0.1", func() error {
		code, _, err := get(http.DefaultClient, "http://127.0.0.1:"+port+"/debug/pprof/", "")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d", code)
		}
		return err
	})
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, a := range addrs {
		ipNet, ok := a.(*net.IPNet)
		if !ok || ipNet.IP.IsLoopback() || ipNet.IP.IsLinkLocalUnicast() {
			continue
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ipNet.IP.String(), port), 2*time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("pprof answers on %s, want loopback only", ipNet.IP)
		}
		checked++
	}
	if checked == 0 {
		t.Log("no non-loopback address to check pprof against")
	}
}

// freeAddr returns host:port of a port free now on host.
func freeAddr(t *testing.T, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// freePort returns a port free now on every interface.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
