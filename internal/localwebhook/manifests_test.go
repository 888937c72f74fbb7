package localwebhook

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

const raw = `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-batch-v1-job
  failurePolicy: Fail
  name: vjob.kb.io
  rules:
  - apiGroups: [batch]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [jobs]
  sideEffects: None
- admissionReviewVersions: [v1]
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-kueue-x-k8s-io-v1beta2-clusterqueue
  failurePolicy: Fail
  name: vclusterqueue.kb.io
  timeoutSeconds: 3
  namespaceSelector: {}
  rules:
  - apiGroups: [kueue.x-k8s.io]
    apiVersions: [v1beta2]
    operations: [CREATE]
    resources: [clusterqueues]
  sideEffects: None
`

func TestNormalizeAddsMissingConfigurationsAndDefaults(t *testing.T) {
	out, err := Normalize([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs.Mutating) != 1 || defs.Mutating[0].Name != MutatingName || len(defs.Mutating[0].Webhooks) != 0 {
		t.Errorf("mutating configurations: %+v, want one empty %s", defs.Mutating, MutatingName)
	}
	if len(defs.Validating) != 1 || len(defs.Validating[0].Webhooks) != 2 {
		t.Fatalf("validating configurations: %+v", defs.Validating)
	}
	job, cq := defs.Validating[0].Webhooks[0], defs.Validating[0].Webhooks[1]
	if ptr.Deref(job.TimeoutSeconds, 0) != DefaultTimeoutSeconds {
		t.Errorf("timeout of %s = %v, want the default", job.Name, job.TimeoutSeconds)
	}
	sel := job.NamespaceSelector
	if sel == nil || len(sel.MatchExpressions) != 1 || strings.Join(sel.MatchExpressions[0].Values, ",") != "kube-system,kueue-system" ||
		sel.MatchExpressions[0].Key != "kubernetes.io/metadata.name" || sel.MatchExpressions[0].Operator != "NotIn" {
		t.Errorf("namespaceSelector of %s = %+v", job.Name, sel)
	}
	if ptr.Deref(cq.TimeoutSeconds, 0) != 3 || cq.NamespaceSelector == nil || len(cq.NamespaceSelector.MatchExpressions) != 0 {
		t.Errorf("values a marker chose were overridden: %+v", cq)
	}
	again, err := Normalize(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, out) {
		t.Errorf("normalizing twice changed the output:\n%s\n---- vs ----\n%s", out, again)
	}
}

func TestNormalizeWithoutMarkers(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "---\n"} {
		out, err := Normalize([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		defs, err := Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(defs.Mutating) != 1 || len(defs.Validating) != 1 {
			t.Errorf("input %q: %d mutating and %d validating configurations, want 1 each", in, len(defs.Mutating), len(defs.Validating))
		}
	}
}

func TestNormalizeRejectsOtherKinds(t *testing.T) {
	if _, err := Normalize([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n")); err == nil {
		t.Error("a Service was accepted among webhook configurations")
	}
	if _, err := Parse([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n")); err == nil {
		t.Error("Parse accepted a Service")
	}
	noPath := strings.Replace(raw, "      path: /validate-batch-v1-job\n", "", 1)
	if _, err := Parse([]byte(noPath)); err == nil || !strings.Contains(err.Error(), "vjob.kb.io") {
		t.Errorf("a webhook without a service path: err = %v", err)
	}
}

func TestEmbeddedManifestsAreNormalized(t *testing.T) {
	m := Manifests()
	if _, err := Parse(m); err != nil {
		t.Fatalf("embedded manifests: %v", err)
	}
	out, err := Normalize(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, m) {
		t.Error("zz_generated.manifests.yaml is not normalized: run make generate")
	}
}

func TestConfigurationsPointAtTheLocalServer(t *testing.T) {
	out, err := Normalize([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	muts, vals, err := Configurations(defs, "https://127.0.0.1:9443", []byte("ca"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(muts) != 1 || muts[0].Name != "kueue-mutating-webhook-configuration" || muts[0].Labels[Label] != "true" {
		t.Errorf("mutating: %+v", muts)
	}
	if len(vals) != 1 || vals[0].Name != "kueue-validating-webhook-configuration" {
		t.Fatalf("validating: %+v", vals)
	}
	for _, w := range vals[0].Webhooks {
		cc := w.ClientConfig
		if cc.Service != nil || string(cc.CABundle) != "ca" || !strings.HasPrefix(ptr.Deref(cc.URL, ""), "https://127.0.0.1:9443/validate-") {
			t.Errorf("webhook %s: client config %+v", w.Name, cc)
		}
	}
	if defs.Validating[0].Name != ValidatingName || defs.Validating[0].Webhooks[0].ClientConfig.Service == nil {
		t.Error("Configurations modified its input")
	}
	defs.Validating[0].Webhooks[0].ClientConfig.Service.Path = nil
	if _, _, err := Configurations(defs, "https://127.0.0.1:9443", nil, nil); err == nil {
		t.Error("a webhook without a path was accepted")
	}
}

func TestConfigurationsLeaveOutUnservedWebhooks(t *testing.T) {
	out, err := Normalize([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	served := func(path string) bool { return path == "/validate-batch-v1-job" }
	_, vals, err := Configurations(defs, "https://127.0.0.1:9443", nil, served)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals[0].Webhooks) != 1 || vals[0].Webhooks[0].Name != "vjob.kb.io" {
		t.Errorf("registered %+v, want only vjob.kb.io", vals[0].Webhooks)
	}
	if got := Unserved(defs, served); len(got) != 1 || got[0] != "vclusterqueue.kb.io" {
		t.Errorf("Unserved = %v, want [vclusterqueue.kb.io]", got)
	}
	if len(defs.Validating[0].Webhooks) != 2 {
		t.Error("Configurations modified its input")
	}
}
