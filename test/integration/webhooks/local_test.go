package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/localwebhook"
)

// testManifests define a validating and a mutating webhook for ConfigMaps
// labelled testLabel, in the shape controller-gen generates, and a
// validating webhook that no handler serves.
const testManifests = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mconfigmap.test.kuota.dev
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-test-configmap}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 5
  objectSelector:
    matchLabels: {kuota.test/webhooks: "on"}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- name: vconfigmap.test.kuota.dev
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-test-configmap}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 5
  objectSelector:
    matchLabels: {kuota.test/webhooks: "on"}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
- name: vunserved.test.kuota.dev
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-nothing-serves-this}
  failurePolicy: Fail
  sideEffects: None
  objectSelector:
    matchLabels: {kuota.test/webhooks: "on"}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
`

const (
	testLabel   = "kuota.test/webhooks"
	mutatedKey  = "kuota.test/mutated"
	deniedReply = "kuota test webhook: data.allowed must be yes"
)

// testWebhooks registers the handlers of testManifests and counts calls.
func testWebhooks(calls *atomic.Int32) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		srv := mgr.GetWebhookServer()
		srv.Register("/validate-test-configmap", &admission.Webhook{Handler: admission.HandlerFunc(
			func(_ context.Context, req admission.Request) admission.Response {
				calls.Add(1)
				var cm corev1.ConfigMap
				if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
					return admission.Errored(400, err)
				}
				if cm.Data["allowed"] != "yes" {
					return admission.Denied(deniedReply)
				}
				return admission.Allowed("")
			})})
		srv.Register("/mutate-test-configmap", &admission.Webhook{Handler: admission.HandlerFunc(
			func(_ context.Context, req admission.Request) admission.Response {
				calls.Add(1)
				var cm corev1.ConfigMap
				if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
					return admission.Errored(400, err)
				}
				cm.Labels[mutatedKey] = "yes"
				out, err := json.Marshal(&cm)
				if err != nil {
					return admission.Errored(500, err)
				}
				return admission.PatchResponseFromRaw(req.Object.Raw, out)
			})})
		return nil
	}
}

func TestLocalModeRegistersWebhooksTheAPIServerCalls(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	port := *cfg.Webhook.Port
	var calls atomic.Int32
	stop := startManager(t, app.Options{Config: cfg, LocalWebhooks: true, WebhookManifests: []byte(testManifests),
		Webhooks: []func(ctrl.Manager) error{testWebhooks(&calls)}})

	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	eventually(t, 30*time.Second, "validating configuration registered", func() error {
		return env.Client.Get(ctx, types.NamespacedName{Name: certs.ValidatingWebhookConfigurationName}, vwc)
	})
	// The webhook without a handler is left out (it would fail every call).
	if len(vwc.Webhooks) != 1 || vwc.Webhooks[0].Name != "vconfigmap.test.kuota.dev" {
		t.Fatalf("registered validating webhooks %+v, want only vconfigmap.test.kuota.dev", vwc.Webhooks)
	}
	want := fmt.Sprintf("https://127.0.0.1:%d/validate-test-configmap", port)
	cc := vwc.Webhooks[0].ClientConfig
	if ptr.Deref(cc.URL, "") != want || cc.Service != nil || len(cc.CABundle) == 0 {
		t.Errorf("client config = url %v, service %v, %d bytes of CA; want url %s with a CA", ptr.Deref(cc.URL, ""), cc.Service, len(cc.CABundle), want)
	}
	if vwc.Labels[localwebhook.Label] != "true" {
		t.Errorf("labels %v lack %s", vwc.Labels, localwebhook.Label)
	}
	for _, f := range []string{certs.CACertKey, certs.CAKeyKey, certs.CertKey, certs.KeyKey} {
		if _, err := os.Stat(filepath.Join(cfg.Webhook.CertDir, f)); err != nil {
			t.Errorf("certDir: %v", err)
		}
	}

	ns, err := env.CreateNamespace(ctx, "local-webhooks")
	if err != nil {
		t.Fatal(err)
	}
	newCM := func(name, allowed string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{Data: map[string]string{"allowed": allowed}}
		cm.Name, cm.Namespace, cm.Labels = name, ns, map[string]string{testLabel: "on"}
		return cm
	}
	// The API server picks new configurations up within a moment: retry
	// until the webhook answers.
	eventually(t, 30*time.Second, "denied by the local webhook", func() error {
		err := env.Client.Create(ctx, newCM("denied", "no"))
		if err == nil {
			_ = env.Client.Delete(ctx, newCM("denied", "no"))
			return fmt.Errorf("created although the webhook denies it")
		}
		if !strings.Contains(err.Error(), deniedReply) {
			return fmt.Errorf("rejected, but not by the webhook: %w", err)
		}
		return nil
	})
	allowed := newCM("allowed", "yes")
	if err := env.Client.Create(ctx, allowed); err != nil {
		t.Fatalf("an allowed ConfigMap was rejected: %v", err)
	}
	if allowed.Labels[mutatedKey] != "yes" {
		t.Errorf("labels %v: the mutating webhook did not run", allowed.Labels)
	}
	if calls.Load() < 3 {
		t.Errorf("the handlers saw %d calls, want at least 3", calls.Load())
	}

	// A clean shutdown removes the configurations.
	stop()
	err = env.Client.Get(ctx, types.NamespacedName{Name: certs.ValidatingWebhookConfigurationName}, &admissionregistrationv1.ValidatingWebhookConfiguration{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("validating configuration after shutdown: %v, want NotFound", err)
	}
	err = env.Client.Get(ctx, types.NamespacedName{Name: certs.MutatingWebhookConfigurationName}, &admissionregistrationv1.MutatingWebhookConfiguration{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("mutating configuration after shutdown: %v, want NotFound", err)
	}
	eventually(t, 30*time.Second, "ConfigMaps accepted with the manager gone", func() error {
		return client.IgnoreAlreadyExists(env.Client.Create(ctx, newCM("after-shutdown", "no")))
	})
}
