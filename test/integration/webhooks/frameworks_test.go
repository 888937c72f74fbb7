package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/webhook"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// TestWebhooksOfDisabledFrameworksAreRemoved: installed from the bundle
// with only batch/job enabled, the manager removes the Pod, Deployment,
// StatefulSet (and other kinds') webhooks from its configurations, so an
// outage of the manager does not block those writes cluster-wide; the
// webhooks it serves keep their CA bundle.
func TestWebhooksOfDisabledFrameworksAreRemoved(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, configapi.DefaultNamespace)
	objs, err := framework.BundleDocuments("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		// The bundle's Service is not reachable here: nothing may call it
		// while the test runs.
		for _, w := range o.Object["webhooks"].([]any) {
			w.(map[string]any)["failurePolicy"] = "Ignore"
		}
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	cfg := testConfig(t)
	cfg.Integrations = &configapi.Integrations{Frameworks: []string{"batch/job"}}
	startManager(t, app.Options{Config: cfg, Webhooks: []func(ctrl.Manager) error{webhook.Setup, app.JobWebhooks(cfg)}})

	var paths []string
	eventually(t, 30*time.Second, "the webhooks of disabled frameworks removed", func() error {
		var err error
		paths, err = registeredPaths(ctx)
		if err != nil {
			return err
		}
		for _, p := range paths {
			for _, kind := range []string{"-v1-pod", "-v1-deployment", "-v1-statefulset", "jobset", "rayjob"} {
				if strings.Contains(p, kind) {
					return fmt.Errorf("%s still registered", p)
				}
			}
		}
		return nil
	})
	for _, want := range []string{"/mutate-batch-v1-job", "/validate-batch-v1-job", "/validate-kueue-x-k8s-io-v1beta2-workload",
		"/mutate-kueue-x-k8s-io-v1beta2-clusterqueue"} {
		if !slices.Contains(paths, want) {
			t.Errorf("webhook %s was removed; registered: %v", want, paths)
		}
	}
}

// registeredPaths lists the service paths of the bundle's two
// configurations, failing while a kept webhook has no CA bundle.
func registeredPaths(ctx context.Context) ([]string, error) {
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	var paths []string
	if err := env.Client.Get(ctx, types.NamespacedName{Name: certs.MutatingWebhookConfigurationName}, m); err != nil {
		return nil, err
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: certs.ValidatingWebhookConfigurationName}, v); err != nil {
		return nil, err
	}
	var ccs []admissionregistrationv1.WebhookClientConfig
	for _, w := range m.Webhooks {
		ccs = append(ccs, w.ClientConfig)
	}
	for _, w := range v.Webhooks {
		ccs = append(ccs, w.ClientConfig)
	}
	for _, cc := range ccs {
		if len(cc.CABundle) == 0 {
			return nil, fmt.Errorf("webhook %s has no CA bundle yet", *cc.Service.Path)
		}
		paths = append(paths, *cc.Service.Path)
	}
	return paths, nil
}
