package install

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
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/conversion"
)

const (
	namespace      = "kueue-system"
	deploymentName = "kueue-controller-manager"
	configMapName  = "kueue-manager-config"
	configKey      = "controller_manager_config.yaml"
	serviceAccount = "system:serviceaccount:kueue-system:kueue-controller-manager"
)

func bundlePath() string { return filepath.Join(repoRoot, "dist", "install.yaml") }

func TestBundleIsUpToDate(t *testing.T) {
	built := kubectl(t, "kustomize", filepath.Join(repoRoot, "config", "default"))
	committed, err := os.ReadFile(bundlePath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, committed) {
		t.Error("dist/install.yaml differs from config/default: run make dist")
	}
}

// TestBundleInstallsWithOneApply applies the bundle to an empty API server,
// then dry-runs it again, and checks what it installed.
func TestBundleInstallsWithOneApply(t *testing.T) {
	kubectl(t, "apply", "--server-side", "-f", bundlePath())
	kubectl(t, "apply", "--server-side", "--dry-run=server", "-f", bundlePath())
	ctx := context.Background()

	t.Run("CRDs", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("CRD files: %v, %v", files, err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			group, plural, _ := strings.Cut(name, "_")
			crd := &apiextensionsv1.CustomResourceDefinition{}
			waitFor(t, func() bool {
				return kubeClient.Get(ctx, types.NamespacedName{Name: plural + "." + group}, crd) == nil && established(crd)
			}, "CRD "+plural+"."+group+" established (listed in config/crd/kustomization.yaml?)")
			checkConversion(t, crd)
		}
	})

	t.Run("manager", func(t *testing.T) { checkManager(t) })
	t.Run("webhooks", func(t *testing.T) { checkWebhooks(t) })
	t.Run("RBAC", func(t *testing.T) { checkRBAC(t) })
	t.Run("metrics reader", func(t *testing.T) { checkMetricsReader(t) })
}

// checkConversion: the CRDs the manager converts call its webhook Service
// at /convert; the others are converted by the API server.
func checkConversion(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	c := crd.Spec.Conversion
	if !slices.Contains(conversion.CRDNames(), crd.Name) {
		if c != nil && c.Strategy != apiextensionsv1.NoneConverter {
			t.Errorf("CRD %s: conversion %+v, want the API server's (None)", crd.Name, c)
		}
		return
	}
	if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil ||
		c.Webhook.ClientConfig.Service == nil || !slices.Equal(c.Webhook.ConversionReviewVersions, []string{"v1"}) {
		t.Fatalf("CRD %s: conversion %+v, want the manager's webhook", crd.Name, c)
	}
	svc := c.Webhook.ClientConfig.Service
	if svc.Namespace != namespace || svc.Name != "kueue-webhook-service" || ptr.Deref(svc.Path, "") != conversion.Path {
		t.Errorf("CRD %s: conversion calls %s/%s%s, want %s/kueue-webhook-service%s", crd.Name, svc.Namespace, svc.Name,
			ptr.Deref(svc.Path, ""), namespace, conversion.Path)
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
	}
}

func checkManager(t *testing.T) {
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	if err := kubeClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: deploymentName}, dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != "kueue-controller-manager" || pod.SecurityContext == nil || !ptr.Deref(pod.SecurityContext.RunAsNonRoot, false) {
		t.Errorf("pod: service account %q, security context %+v", pod.ServiceAccountName, pod.SecurityContext)
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) {
		t.Errorf("container security context %+v", sc)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("liveness /healthz and readiness /readyz probes expected")
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v", c.Resources.Requests)
	}

	// --config names the ConfigMap's file through its mount.
	var configPath string
	for _, a := range c.Args {
		if p, ok := strings.CutPrefix(a, "--config="); ok {
			configPath = p
		}
	}
	mountOf := func(path string) *corev1.VolumeMount {
		var best *corev1.VolumeMount
		for i, m := range c.VolumeMounts {
			if strings.HasPrefix(path, m.MountPath+"/") && (best == nil || len(m.MountPath) > len(best.MountPath)) {
				best = &c.VolumeMounts[i]
			}
		}
		return best
	}
	m := mountOf(configPath)
	if m == nil || filepath.Join(m.MountPath, configKey) != configPath {
		t.Fatalf("--config=%s is not the ConfigMap's %s under a mount", configPath, configKey)
	}
	vol := volume(pod, m.Name)
	if vol == nil || vol.ConfigMap == nil || vol.ConfigMap.Name != configMapName {
		t.Fatalf("volume %s is not ConfigMap %s", m.Name, configMapName)
	}
	cm := &corev1.ConfigMap{}
	if err := kubeClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: configMapName}, cm); err != nil {
		t.Fatal(err)
	}
	cfg, err := configapi.Decode([]byte(cm.Data[configKey]))
	if err != nil {
		t.Fatalf("the shipped Configuration does not load: %v", err)
	}
	icm := cfg.InternalCertManagement
	if !ptr.Deref(icm.Enable, false) || *icm.WebhookServiceName != "kueue-webhook-service" || *icm.WebhookSecretName != "kueue-webhook-server-cert" {
		t.Errorf("internalCertManagement %+v", icm)
	}
	// certDir must be writable: under an emptyDir on a read-only root.
	if cm := mountOf(cfg.Webhook.CertDir + "/x"); cm == nil || cm.ReadOnly || volume(pod, cm.Name).EmptyDir == nil {
		t.Errorf("webhook.certDir %s is not on a writable emptyDir", cfg.Webhook.CertDir)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["webhook-server"] != int32(*cfg.Webhook.Port) || ports["metrics"] != 8443 || ports["health"] != 8081 {
		t.Errorf("container ports %v do not match the Configuration", ports)
	}

	for name, target := range map[string]string{"kueue-webhook-service": "webhook-server", "kueue-controller-manager-metrics-service": "metrics"} {
		svc := &corev1.Service{}
		if err := kubeClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, svc); err != nil {
			t.Error(err)
			continue
		}
		if svc.Spec.Ports[0].TargetPort.String() != target || svc.Spec.Selector["control-plane"] != dep.Spec.Selector.MatchLabels["control-plane"] {
			t.Errorf("service %s: target port %s, selector %v", name, svc.Spec.Ports[0].TargetPort.String(), svc.Spec.Selector)
		}
	}
}

func volume(pod corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

func checkWebhooks(t *testing.T) {
	ctx := context.Background()
	type hook struct {
		name    string
		cc      admissionregistrationv1.WebhookClientConfig
		timeout *int32
		sel     []string
	}
	var hooks []hook
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := kubeClient.Get(ctx, types.NamespacedName{Name: certs.MutatingWebhookConfigurationName}, m); err != nil {
		t.Fatal(err)
	}
	for _, w := range m.Webhooks {
		hooks = append(hooks, hook{w.Name, w.ClientConfig, w.TimeoutSeconds, notIn(w.NamespaceSelector)})
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := kubeClient.Get(ctx, types.NamespacedName{Name: certs.ValidatingWebhookConfigurationName}, v); err != nil {
		t.Fatal(err)
	}
	for _, w := range v.Webhooks {
		hooks = append(hooks, hook{w.Name, w.ClientConfig, w.TimeoutSeconds, notIn(w.NamespaceSelector)})
	}
	for _, h := range hooks {
		s := h.cc.Service
		if s == nil || s.Name != "kueue-webhook-service" || s.Namespace != namespace || ptr.Deref(s.Port, 443) != 443 {
			t.Errorf("webhook %s calls %+v, want kueue-webhook-service in %s", h.name, s, namespace)
		}
		if h.timeout == nil {
			t.Errorf("webhook %s has no timeoutSeconds", h.name)
		}
		if !slices.Contains(h.sel, "kube-system") || !slices.Contains(h.sel, namespace) {
			t.Errorf("webhook %s: namespaceSelector excludes %v, want kube-system and %s", h.name, h.sel, namespace)
		}
	}
}

// notIn returns the namespaces a selector excludes by name.
func notIn(sel *metav1.LabelSelector) []string {
	if sel == nil {
		return nil
	}
	var out []string
	for _, e := range sel.MatchExpressions {
		if e.Key == corev1.LabelMetadataName && e.Operator == metav1.LabelSelectorOpNotIn {
			out = append(out, e.Values...)
		}
	}
	return out
}

// checkRBAC asks the API server what the manager's service account may do.
func checkRBAC(t *testing.T) {
	for _, c := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "kueue.x-k8s.io", Resource: "workloads"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "kueue.x-k8s.io", Resource: "clusterqueues", Subresource: "status"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "coordination.k8s.io", Resource: "leases", Namespace: namespace}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "events", Namespace: "default"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Resource: "secrets", Namespace: namespace, Name: "kueue-webhook-server-cert"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "secrets", Namespace: namespace}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations",
			Name: certs.ValidatingWebhookConfigurationName}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations",
			Name: certs.MutatingWebhookConfigurationName}, true},
		// The metrics endpoint checks its callers with the API server.
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, true},
		// The ProvisioningRequest admission check, pod defaults and retention.
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "autoscaling.x-k8s.io", Resource: "provisioningrequests", Namespace: "default"}, true},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "autoscaling.x-k8s.io", Resource: "provisioningrequests", Namespace: "default"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "podtemplates", Namespace: "default"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "kueue.x-k8s.io", Resource: "admissionchecks", Subresource: "status"}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "kueue.x-k8s.io", Resource: "provisioningrequestconfigs"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "limitranges"}, true},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "node.k8s.io", Resource: "runtimeclasses"}, true},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "batch", Resource: "jobs", Namespace: "default"}, true},
		// DRA claims charged to quota.
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "resource.k8s.io", Resource: "resourceclaimtemplates", Namespace: "default"}, false},
		// Least privilege: nothing beyond.
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "default"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets", Namespace: namespace}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations",
			Name: "someone-elses"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "coordination.k8s.io", Resource: "leases", Namespace: "default"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "namespaces"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}, false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: serviceAccount, ResourceAttributes: &c.attrs}}
		if err := kubeClient.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != c.want {
			attrs, _ := yaml.Marshal(c.attrs)
			t.Errorf("manager may %s: %v, want %v", strings.ReplaceAll(strings.TrimSpace(string(attrs)), "\n", ", "), sar.Status.Allowed, c.want)
		}
	}
}

// checkMetricsReader checks the ClusterRole that scrapers are bound to: get
// on /metrics, nothing else.
func checkMetricsReader(t *testing.T) {
	role := &rbacv1.ClusterRole{}
	if err := kubeClient.Get(context.Background(), types.NamespacedName{Name: "kueue-metrics-reader"}, role); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	if !equality.Semantic.DeepEqual(role.Rules, want) {
		t.Errorf("kueue-metrics-reader rules %+v, want %+v", role.Rules, want)
	}
}
