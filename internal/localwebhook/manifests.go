// Package localwebhook serves the manager's admission webhooks from a
// process on the developer's host, next to a local cluster
// (kuota-manager --local-webhooks): it registers the webhook configurations
// of the install bundle with clientConfig.url pointing at
// https://127.0.0.1:<port> and a CA bundle of the manager's own loopback
// CA. It also owns the webhook definitions generated from the
// +kubebuilder:webhook markers (config/webhook/manifests.yaml), which
// `make generate` normalizes and copies here for embedding.
package localwebhook

import (
	"bufio"
	"bytes"
	_ "embed" // the generated webhook definitions
	"errors"
	"fmt"
	"io"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

// generated is a copy of config/webhook/manifests.yaml, written by
// `make generate` (hack/webhookgen) and checked by `make verify`.
//
//go:embed zz_generated.manifests.yaml
var generated []byte

// Manifests returns the webhook configurations of the install bundle, with
// their generated (unprefixed) names and service references.
func Manifests() []byte { return bytes.Clone(generated) }

// Generated names of the two configurations (before the bundle's prefix).
const (
	MutatingName   = "mutating-webhook-configuration"
	ValidatingName = "validating-webhook-configuration"
)

// DefaultTimeoutSeconds is the timeout set on every webhook that does not
// choose one.
const DefaultTimeoutSeconds = 10

// Definitions are parsed webhook configurations.
type Definitions struct {
	Mutating   []admissionregistrationv1.MutatingWebhookConfiguration
	Validating []admissionregistrationv1.ValidatingWebhookConfiguration
}

// Parse reads a multi-document YAML of webhook configurations; every
// webhook must call a service path.
func Parse(data []byte) (*Definitions, error) {
	defs := &Definitions{}
	err := eachDocument(data, func(doc []byte, kind string) error {
		switch kind {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &c); err != nil {
				return fmt.Errorf("parsing %s: %w", kind, err)
			}
			defs.Mutating = append(defs.Mutating, c)
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &c); err != nil {
				return fmt.Errorf("parsing %s: %w", kind, err)
			}
			defs.Validating = append(defs.Validating, c)
		default:
			return fmt.Errorf("unexpected kind %q among webhook configurations", kind)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, c := range defs.Mutating {
		for _, w := range c.Webhooks {
			err = errors.Join(err, needsPath(c.Name, w.Name, w.ClientConfig))
		}
	}
	for _, c := range defs.Validating {
		for _, w := range c.Webhooks {
			err = errors.Join(err, needsPath(c.Name, w.Name, w.ClientConfig))
		}
	}
	return defs, err
}

// needsPath: local mode serves each webhook at its service path.
func needsPath(config, webhook string, cc admissionregistrationv1.WebhookClientConfig) error {
	if cc.Service == nil || cc.Service.Path == nil {
		return fmt.Errorf("webhook %s of %s has no clientConfig.service.path", webhook, config)
	}
	return nil
}

// eachDocument calls fn with every non-empty document of data and its kind.
func eachDocument(data []byte, fn func(doc []byte, kind string) error) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading webhook configurations: %w", err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("reading webhook configurations: %w", err)
		}
		if meta.Kind == "" {
			continue // an empty or comment-only document
		}
		if err := fn(doc, meta.Kind); err != nil {
			return err
		}
	}
}

// Normalize turns controller-gen's output (possibly empty: no markers yet)
// into the bundle's definitions: both configurations present, and every
// webhook with a timeout and a namespaceSelector that leaves out
// kube-system and Kuota's namespace unless its marker chose otherwise.
// Kustomize cannot add a field to every element of a list that may be
// empty, hence this step. Its output is stable: normalizing it again gives
// the same bytes.
func Normalize(raw []byte) ([]byte, error) {
	var docs []map[string]any
	seen := map[string]bool{}
	err := eachDocument(raw, func(doc []byte, kind string) error {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return fmt.Errorf("parsing %s: %w", kind, err)
		}
		if kind != "MutatingWebhookConfiguration" && kind != "ValidatingWebhookConfiguration" {
			return fmt.Errorf("unexpected kind %q among webhook configurations", kind)
		}
		hooks, _ := obj["webhooks"].([]any)
		for _, h := range hooks {
			if hook, ok := h.(map[string]any); ok {
				defaultWebhook(hook)
			}
		}
		seen[kind] = true
		docs = append(docs, obj)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, stub := range []struct{ kind, name string }{
		{"MutatingWebhookConfiguration", MutatingName}, {"ValidatingWebhookConfiguration", ValidatingName},
	} {
		if !seen[stub.kind] {
			docs = append(docs, map[string]any{"apiVersion": admissionregistrationv1.SchemeGroupVersion.String(),
				"kind": stub.kind, "metadata": map[string]any{"name": stub.name}})
		}
	}
	var out bytes.Buffer
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("writing webhook configurations: %w", err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes(), nil
}

func defaultWebhook(hook map[string]any) {
	if _, ok := hook["timeoutSeconds"]; !ok {
		hook["timeoutSeconds"] = DefaultTimeoutSeconds
	}
	if _, ok := hook["namespaceSelector"]; !ok {
		hook["namespaceSelector"] = map[string]any{"matchExpressions": []any{map[string]any{
			"key":      corev1.LabelMetadataName,
			"operator": string(metav1.LabelSelectorOpNotIn),
			"values":   []any{metav1.NamespaceSystem, configapi.DefaultNamespace},
		}}}
	}
}
