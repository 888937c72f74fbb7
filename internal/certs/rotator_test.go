package certs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var secretKey = types.NamespacedName{Namespace: "kueue-system", Name: "kueue-webhook-server-cert"}

func webhookConfigs() []client.Object {
	svc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "kueue-system", Name: "kueue-webhook-service", Path: ptr.To(path)}}
	}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	m.Name = MutatingWebhookConfigurationName
	for _, n := range []string{"mjob.kb.io", "mclusterqueue.kb.io"} {
		m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{Name: n, ClientConfig: svc("/" + n),
			SideEffects: none, AdmissionReviewVersions: []string{"v1"}})
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	v.Name = ValidatingWebhookConfigurationName
	for _, n := range []string{"vjob.kb.io", "vclusterqueue.kb.io", "vworkload.kb.io"} {
		v.Webhooks = append(v.Webhooks, admissionregistrationv1.ValidatingWebhook{Name: n, ClientConfig: svc("/" + n),
			SideEffects: none, AdmissionReviewVersions: []string{"v1"}})
	}
	return []client.Object{m, v}
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newRotator(t *testing.T, c client.Client, clk *clock) *Rotator {
	return &Rotator{Reader: c, Writer: c, Secret: secretKey, CertDir: filepath.Join(t.TempDir(), "certs"),
		Spec: testSpec, Webhooks: DefaultWebhookConfigurations("workloads.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io"), Now: clk.Now}
}

func newFakeClient(objs ...client.Object) client.Client {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// bundles returns the caBundle of every webhook of both configurations.
func bundles(t *testing.T, c client.Client) [][]byte {
	t.Helper()
	ctx := context.Background()
	var out [][]byte
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Name: MutatingWebhookConfigurationName}, m); err != nil {
		t.Fatal(err)
	}
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Name: ValidatingWebhookConfigurationName}, v); err != nil {
		t.Fatal(err)
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

func secretData(t *testing.T, c client.Client) (map[string][]byte, string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), secretKey, s); err != nil {
		t.Fatal(err)
	}
	return s.Data, s.ResourceVersion
}

func TestRotatorIssuesWritesAndInjects(t *testing.T) {
	c := newFakeClient(webhookConfigs()...)
	clk := &clock{now: t0}
	r := newRotator(t, c, clk)
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, rv := secretData(t, c)
	ca, serving := certOf(t, data, CACertKey, CAKeyKey), certOf(t, data, CertKey, KeyKey)
	if err := VerifyServing(ca, serving, testSpec.Hosts, t0); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]byte{CertKey: data[CertKey], KeyKey: data[KeyKey], CACertKey: data[CACertKey]} {
		got, err := os.ReadFile(filepath.Join(r.CertDir, key))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in certDir differs from the Secret (err %v)", key, err)
		}
	}
	if info, err := os.Stat(filepath.Join(r.CertDir, KeyKey)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("tls.key mode: %v, %v", info, err)
	}
	if _, err := os.Stat(filepath.Join(r.CertDir, CAKeyKey)); err == nil {
		t.Error("the CA key was written to certDir")
	}
	got := bundles(t, c)
	if len(got) != 5 {
		t.Fatalf("%d webhooks, want 5", len(got))
	}
	for i, b := range got {
		if !bytes.Equal(b, data[CACertKey]) {
			t.Errorf("webhook %d has caBundle %q, want the CA", i, b)
		}
	}

	// A second pass with nothing to renew writes nothing.
	cfgRV := resourceVersions(t, c)
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, rv2 := secretData(t, c); rv2 != rv {
		t.Error("the Secret was rewritten although valid")
	}
	if after := resourceVersions(t, c); after != cfgRV {
		t.Errorf("webhook configurations were rewritten although up to date: %v -> %v", cfgRV, after)
	}
}

func resourceVersions(t *testing.T, c client.Client) [2]string {
	t.Helper()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(context.Background(), types.NamespacedName{Name: MutatingWebhookConfigurationName}, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), types.NamespacedName{Name: ValidatingWebhookConfigurationName}, v); err != nil {
		t.Fatal(err)
	}
	return [2]string{m.ResourceVersion, v.ResourceVersion}
}

func TestRotatorRotatesNearExpiry(t *testing.T) {
	c := newFakeClient(webhookConfigs()...)
	clk := &clock{now: t0}
	r := newRotator(t, c, clk)
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _ := secretData(t, c)
	clk.now = t0.Add(testSpec.CertValidity - testSpec.RenewBefore + time.Minute)
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, _ := secretData(t, c)
	if bytes.Equal(before[CertKey], after[CertKey]) {
		t.Fatal("serving certificate not rotated near its expiry")
	}
	if !bytes.Equal(before[CACertKey], after[CACertKey]) {
		t.Error("CA rotated with the serving certificate")
	}
	onDisk, err := os.ReadFile(filepath.Join(r.CertDir, CertKey))
	if err != nil || !bytes.Equal(onDisk, after[CertKey]) {
		t.Errorf("certDir still holds the old certificate (err %v)", err)
	}

	// CA near its expiry: new CA, and the bundle trusts old and new.
	clk.now = t0.Add(testSpec.CAValidity - testSpec.RenewBefore + time.Minute)
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	rotated, _ := secretData(t, c)
	if bytes.Equal(rotated[CACertKey], after[CACertKey]) {
		t.Fatal("CA not rotated near its expiry")
	}
	for i, b := range bundles(t, c) {
		if !bytes.Contains(b, rotated[CACertKey]) || !bytes.Contains(b, after[CACertKey]) {
			t.Errorf("webhook %d does not trust both the new and the previous CA", i)
		}
	}
}

func TestRotatorsOfTwoReplicasAgreeOnOneCA(t *testing.T) {
	c := newFakeClient(webhookConfigs()...)
	clk := &clock{now: t0}
	a, b := newRotator(t, c, clk), newRotator(t, c, clk)
	if err := a.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	fa, _ := os.ReadFile(filepath.Join(a.CertDir, CertKey))
	fb, _ := os.ReadFile(filepath.Join(b.CertDir, CertKey))
	if len(fa) == 0 || !bytes.Equal(fa, fb) {
		t.Error("replicas serve different certificates")
	}
}

func TestRotatorRereadsTheSecretAfterLosingARace(t *testing.T) {
	c := newFakeClient(webhookConfigs()...)
	clk := &clock{now: t0}
	winner := newRotator(t, c, clk)
	// The loser read "no Secret" before the winner created it.
	loser := newRotator(t, &createFirst{Client: c, before: func() {
		if err := winner.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}}, clk)
	if err := loser.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, _ := secretData(t, c)
	onDisk, _ := os.ReadFile(filepath.Join(loser.CertDir, CertKey))
	if !bytes.Equal(onDisk, data[CertKey]) {
		t.Error("the replica that lost the race does not serve the Secret's certificate")
	}
}

// createFirst runs before just ahead of the first Create.
type createFirst struct {
	client.Client
	before func()
	done   bool
}

func (c *createFirst) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if !c.done {
		c.done = true
		c.before()
	}
	return c.Client.Create(ctx, obj, opts...)
}

func TestRotatorWithoutWebhookConfigurations(t *testing.T) {
	c := newFakeClient()
	r := newRotator(t, c, &clock{now: t0})
	r.Interval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	select {
	case <-r.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("rotator not ready although only the webhook configurations are missing")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
}

func TestInjectCABundleLeavesOtherFieldsAlone(t *testing.T) {
	objs := webhookConfigs()
	c := newFakeClient(objs...)
	if err := InjectCABundle(context.Background(), c, c, DefaultWebhookConfigurations("workloads.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io"), []byte("bundle")); err != nil {
		t.Fatal(err)
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(context.Background(), types.NamespacedName{Name: ValidatingWebhookConfigurationName}, v); err != nil {
		t.Fatal(err)
	}
	for _, w := range v.Webhooks {
		if string(w.ClientConfig.CABundle) != "bundle" || w.ClientConfig.Service == nil ||
			*w.ClientConfig.Service.Path != "/"+w.Name {
			t.Errorf("webhook %s: client config %+v", w.Name, w.ClientConfig)
		}
	}
}

// The conversion webhook of a converted CRD gets the bundle; a CRD the API
// server converts itself is left alone.
func TestInjectCABundleIntoConversionWebhooks(t *testing.T) {
	converted := &apiextensionsv1.CustomResourceDefinition{}
	converted.Name = "workloads.kueue.x-k8s.io"
	converted.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}, ClientConfig: &apiextensionsv1.WebhookClientConfig{
			Service: &apiextensionsv1.ServiceReference{Namespace: "kueue-system", Name: "kueue-webhook-service", Path: ptr.To("/convert")}}}}
	plain := &apiextensionsv1.CustomResourceDefinition{}
	plain.Name = "cohorts.kueue.x-k8s.io"
	plain.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	c := newFakeClient(converted, plain)
	if err := InjectCABundle(context.Background(), c, c, DefaultWebhookConfigurations("workloads.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io"), []byte("bundle")); err != nil {
		t.Fatal(err)
	}
	got := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), types.NamespacedName{Name: converted.Name}, got); err != nil {
		t.Fatal(err)
	}
	if cc := got.Spec.Conversion.Webhook.ClientConfig; string(cc.CABundle) != "bundle" || cc.Service.Path == nil || *cc.Service.Path != "/convert" {
		t.Errorf("conversion client config = %+v, want the bundle and the service kept", cc)
	}
	if err := c.Get(context.Background(), types.NamespacedName{Name: plain.Name}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Conversion.Webhook != nil {
		t.Errorf("a CRD without a conversion webhook got one: %+v", got.Spec.Conversion)
	}
}

// Webhooks whose path the manager does not serve (a job framework that is
// not enabled) are removed; the others keep their bundle.
func TestInjectCABundleRemovesUnservedWebhooks(t *testing.T) {
	c := newFakeClient(webhookConfigs()...)
	names := DefaultWebhookConfigurations()
	names.Served = func(path string) bool { return !strings.Contains(path, "job") }
	if err := InjectCABundle(context.Background(), c, c, names, []byte("bundle")); err != nil {
		t.Fatal(err)
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(context.Background(), types.NamespacedName{Name: MutatingWebhookConfigurationName}, m); err != nil {
		t.Fatal(err)
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(context.Background(), types.NamespacedName{Name: ValidatingWebhookConfigurationName}, v); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range m.Webhooks {
		got = append(got, w.Name+"="+string(w.ClientConfig.CABundle))
	}
	for _, w := range v.Webhooks {
		got = append(got, w.Name+"="+string(w.ClientConfig.CABundle))
	}
	want := []string{"mclusterqueue.kb.io=bundle", "vclusterqueue.kb.io=bundle", "vworkload.kb.io=bundle"}
	if !slices.Equal(got, want) {
		t.Errorf("webhooks after injection %v, want %v", got, want)
	}
}
