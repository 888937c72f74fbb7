package install

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/conversion"
)

// documents splits a multi-document YAML into objects.
func documents(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func shippedConfig(t *testing.T, objs []*unstructured.Unstructured) *configapi.Configuration {
	t.Helper()
	cm := find(objs, "ConfigMap", configMapName)
	if cm == nil {
		t.Fatal("no ConfigMap " + configMapName)
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", configKey)
	cfg, err := configapi.Decode([]byte(data))
	if err != nil {
		t.Fatalf("Configuration of the bundle: %v", err)
	}
	return cfg
}

// TestCertManagerVariant builds config/certmanager and checks that it
// hands the certificate to cert-manager consistently, then dry-runs what
// the API server can check without cert-manager's CRDs.
func TestCertManagerVariant(t *testing.T) {
	built := kubectl(t, "kustomize", filepath.Join(repoRoot, "config", "certmanager"))
	objs := documents(t, built)
	defaults := documents(t, kubectl(t, "kustomize", filepath.Join(repoRoot, "config", "default")))

	cert, issuer := find(objs, "Certificate", "kueue-serving-cert"), find(objs, "Issuer", "kueue-selfsigned-issuer")
	if cert == nil || issuer == nil || cert.GetNamespace() != namespace {
		t.Fatalf("Certificate kueue-serving-cert and Issuer kueue-selfsigned-issuer in %s expected", namespace)
	}
	issuerRef, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
	secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if issuerRef != issuer.GetName() || len(dnsNames) == 0 || dnsNames[0] != "kueue-webhook-service.kueue-system.svc" {
		t.Errorf("Certificate: issuer %q, DNS names %v", issuerRef, dnsNames)
	}
	for kind, name := range map[string]string{
		"MutatingWebhookConfiguration":   certs.MutatingWebhookConfigurationName,
		"ValidatingWebhookConfiguration": certs.ValidatingWebhookConfigurationName,
	} {
		wc := find(objs, kind, name)
		if wc == nil || wc.GetAnnotations()["cert-manager.io/inject-ca-from"] != namespace+"/"+cert.GetName() {
			t.Errorf("%s %s lacks the CA injection annotation for the Certificate", kind, name)
		}
	}

	for _, name := range conversion.CRDNames() {
		crd := find(objs, "CustomResourceDefinition", name)
		if crd == nil || crd.GetAnnotations()["cert-manager.io/inject-ca-from"] != namespace+"/"+cert.GetName() {
			t.Errorf("CRD %s lacks the CA injection annotation for its conversion webhook", name)
		}
	}

	// The manager reads the Secret from certDir and does not manage it.
	cfg := shippedConfig(t, objs)
	if ptr.Deref(cfg.InternalCertManagement.Enable, true) {
		t.Error("internalCertManagement is still enabled")
	}
	dep := &appsv1.Deployment{}
	if err := runtimeConvert(find(objs, "Deployment", deploymentName), dep); err != nil {
		t.Fatal(err)
	}
	mounted := false
	for _, m := range dep.Spec.Template.Spec.Containers[0].VolumeMounts {
		v := volume(dep.Spec.Template.Spec, m.Name)
		if m.MountPath == cfg.Webhook.CertDir && v != nil && v.Secret != nil && v.Secret.SecretName == secretName {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("Secret %s is not mounted at webhook.certDir %s", secretName, cfg.Webhook.CertDir)
	}

	// Apart from certificate management, the two Configurations agree.
	def := shippedConfig(t, defaults)
	def.InternalCertManagement, cfg.InternalCertManagement = nil, nil
	if !reflect.DeepEqual(def, cfg) {
		t.Error("config/components/certmanager/controller_manager_config.yaml drifted from config/manager's")
	}

	// The API server accepts everything but cert-manager's own kinds.
	var rest [][]byte
	for _, o := range objs {
		if o.GetKind() == "Certificate" || o.GetKind() == "Issuer" {
			continue
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, b)
	}
	file := filepath.Join(t.TempDir(), "certmanager.yaml")
	if err := os.WriteFile(file, bytes.Join(rest, []byte("---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	// The namespace and CRDs must exist for a dry run of the rest.
	kubectl(t, "apply", "--server-side", "-f", bundlePath())
	kubectl(t, "apply", "--server-side", "--dry-run=server", "-f", file)
}

func runtimeConvert(u *unstructured.Unstructured, into any) error {
	if u == nil {
		return errors.New("object missing from the bundle")
	}
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, into)
}
