package trainjob

import (
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The webhooks register at Kueue's paths with the scheme the manager
// builds (the integration's AddToScheme included), and answer a request.
func TestWebhooksRegisterAtKueuePaths(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, Integration.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	srv := webhook.NewServer(webhook.Options{})
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme: scheme, WebhookServer: srv, Metrics: server.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Integration.SetupWebhook(mgr, jobframework.Options{}); err != nil {
		t.Fatalf("setting up the webhooks: %v", err)
	}
	for _, verb := range []string{"mutate", "validate"} {
		p := jobframework.WebhookPath(verb, GVK)
		if !strings.HasPrefix(p, "/"+verb+"-trainer-kubeflow-org-v1alpha1-trainjob") {
			t.Errorf("path %s", p)
		}
		rec := httptest.NewRecorder()
		srv.WebhookMux().ServeHTTP(rec, httptest.NewRequest("POST", p, strings.NewReader("{}")))
		if rec.Code == 404 {
			t.Errorf("%s is not served", p)
		}
	}
}
