package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/util/retry"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/certs"
)

// installedConfigurations creates the bundle's two webhook configurations
// (service references, no CA) for ConfigMaps with a label nobody sets: in
// envtest there is no Service network, so nothing must call them.
func installedConfigurations(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: configapi.DefaultNamespace, Name: configapi.DefaultWebhookServiceName, Path: ptr.To(path)}}
	}
	rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"kuota.test/never": "set"}}
	none, ignore := ptr.To(admissionregistrationv1.SideEffectClassNone), ptr.To(admissionregistrationv1.Ignore)
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	m.Name = certs.MutatingWebhookConfigurationName
	m.Webhooks = []admissionregistrationv1.MutatingWebhook{{Name: "m.test.kuota.dev", ClientConfig: cc("/mutate-test-configmap"),
		Rules: rules, ObjectSelector: sel, SideEffects: none, FailurePolicy: ignore, AdmissionReviewVersions: []string{"v1"}}}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	v.Name = certs.ValidatingWebhookConfigurationName
	for _, n := range []string{"v1.test.kuota.dev", "v2.test.kuota.dev"} {
		v.Webhooks = append(v.Webhooks, admissionregistrationv1.ValidatingWebhook{Name: n, ClientConfig: cc("/validate-test-configmap"),
			Rules: rules, ObjectSelector: sel, SideEffects: none, FailurePolicy: ignore, AdmissionReviewVersions: []string{"v1"}})
	}
	for _, obj := range []client.Object{m, v} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.Name = name
	if err := env.Client.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func TestInternalCertManagement(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, configapi.DefaultNamespace)
	installedConfigurations(t)
	convertViaService(t, "cohorts.kueue.x-k8s.io")
	cfg := testConfig(t)
	var calls atomic.Int32
	startManager(t, app.Options{Config: cfg, Webhooks: []func(ctrl.Manager) error{testWebhooks(&calls)}})

	secretKey := types.NamespacedName{Namespace: configapi.DefaultNamespace, Name: configapi.DefaultWebhookSecretName}
	t.Cleanup(func() {
		s := &corev1.Secret{}
		s.Name, s.Namespace = secretKey.Name, secretKey.Namespace
		_ = env.Client.Delete(context.Background(), s)
	})
	secret := &corev1.Secret{}
	eventually(t, 30*time.Second, "certificate Secret created", func() error { return env.Client.Get(ctx, secretKey, secret) })
	ca := secret.Data[certs.CACertKey]
	eventually(t, 30*time.Second, "CA injected into every webhook", func() error { return injected(ctx, ca) })
	eventually(t, 30*time.Second, "CA injected into the conversion webhook of a CRD", func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "cohorts.kueue.x-k8s.io"}, crd); err != nil {
			return err
		}
		if !bytes.Equal(crd.Spec.Conversion.Webhook.ClientConfig.CABundle, ca) {
			return errors.New("no CA bundle yet")
		}
		return nil
	})
	onDisk, err := os.ReadFile(filepath.Join(cfg.Webhook.CertDir, certs.CertKey))
	if err != nil || !bytes.Equal(onDisk, secret.Data[certs.CertKey]) {
		t.Errorf("certDir's tls.crt differs from the Secret's (err %v)", err)
	}

	// The server presents the Secret's certificate, valid for the Service.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	host := certs.ServiceHost(configapi.DefaultWebhookServiceName, configapi.DefaultNamespace)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(*cfg.Webhook.Port))
	eventually(t, 30*time.Second, "webhook server serving the rotated certificate", func() error {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: host})
		if err != nil {
			return err
		}
		return conn.Close()
	})

	// A second replica (or a restart) reuses the Secret.
	rv := secret.ResourceVersion
	cfg2 := testConfig(t)
	startManager(t, app.Options{Config: cfg2, Webhooks: []func(ctrl.Manager) error{testWebhooks(&calls)}})
	eventually(t, 30*time.Second, "second replica's certificate files", func() error {
		b, err := os.ReadFile(filepath.Join(cfg2.Webhook.CertDir, certs.CertKey))
		if err != nil {
			return err
		}
		if !bytes.Equal(b, secret.Data[certs.CertKey]) {
			return errors.New("the second replica serves another certificate")
		}
		return nil
	})
	if err := env.Client.Get(ctx, secretKey, secret); err != nil {
		t.Fatal(err)
	}
	if secret.ResourceVersion != rv {
		t.Error("the second replica rewrote a valid Secret")
	}
}

// convertViaService gives the CRD the install bundle's conversion stanza,
// which calls the manager through its Service (unreachable here; only the
// CA injection is checked), and restores it at the end of the test.
func convertViaService(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	var before *apiextensionsv1.CustomResourceConversion
	set := func(c func(*apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceConversion) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
				return err
			}
			crd.Spec.Conversion = c(crd.Spec.Conversion)
			return env.Client.Update(ctx, crd)
		})
	}
	if err := set(func(cur *apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceConversion {
		before = cur
		return &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
				Namespace: configapi.DefaultNamespace, Name: configapi.DefaultWebhookServiceName, Path: ptr.To("/convert")}}}}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set(func(*apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceConversion {
			return before
		}); err != nil {
			t.Error(err)
		}
	})
}

// injected checks that every webhook of both configurations trusts ca.
func injected(ctx context.Context, ca []byte) error {
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: certs.MutatingWebhookConfigurationName}, m); err != nil {
		return err
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: certs.ValidatingWebhookConfigurationName}, v); err != nil {
		return err
	}
	var got [][]byte
	for _, w := range m.Webhooks {
		got = append(got, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		got = append(got, w.ClientConfig.CABundle)
	}
	for i, b := range got {
		if !bytes.Equal(b, ca) {
			return fmt.Errorf("webhook %d of %d has no CA bundle yet", i+1, len(got))
		}
	}
	return nil
}

// TestManagerWithoutWebhooks: the in-process managers of the other
// integration tests pass no webhooks; they must not listen, nor issue
// certificates.
func TestManagerWithoutWebhooks(t *testing.T) {
	const ns = "no-webhooks"
	ensureNamespace(t, ns)
	cfg := testConfig(t)
	cfg.Namespace = ptr.To(ns)
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Stop(); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(time.Second)
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*cfg.Webhook.Port)), time.Second); err == nil {
		conn.Close()
		t.Error("a manager without webhooks listens on the webhook port")
	}
	secrets := &corev1.SecretList{}
	if err := env.Client.List(context.Background(), secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) > 0 {
		t.Errorf("a manager without webhooks wrote %d Secrets", len(secrets.Items))
	}
	if entries, _ := os.ReadDir(cfg.Webhook.CertDir); len(entries) > 0 {
		t.Errorf("a manager without webhooks wrote %d files into certDir", len(entries))
	}
}

// TestWebhooksWaitForCertificates: while the certificates cannot be issued
// (here: the manager's namespace does not exist yet), the manager runs,
// does not serve webhooks and is not ready; it recovers by itself.
func TestWebhooksWaitForCertificates(t *testing.T) {
	ns := fmt.Sprintf("late-namespace-%d", time.Now().UnixNano())
	cfg := testConfig(t)
	cfg.Namespace = ptr.To(ns)
	health := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	var calls atomic.Int32
	startManager(t, app.Options{Config: cfg, HealthBindAddress: ptr.To(health),
		Webhooks: []func(ctrl.Manager) error{testWebhooks(&calls)}})
	readyz := func() error {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("readyz: %s: %s", resp.Status, body)
		}
		return nil
	}
	healthz := func() error {
		resp, err := http.Get("http://" + health + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthz: %s", resp.Status)
		}
		return nil
	}
	eventually(t, 30*time.Second, "manager alive", healthz)
	time.Sleep(2 * time.Second)
	if err := readyz(); err == nil {
		t.Error("ready without webhook certificates")
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*cfg.Webhook.Port)), time.Second); err == nil {
		conn.Close()
		t.Error("the webhook server listens without certificates")
	}

	ensureNamespace(t, ns)
	eventually(t, 60*time.Second, "ready once the namespace exists", readyz)
	if _, err := os.Stat(filepath.Join(cfg.Webhook.CertDir, certs.CertKey)); err != nil {
		t.Error(err)
	}
}
