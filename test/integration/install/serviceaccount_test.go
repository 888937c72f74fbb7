package install

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The manager runs here under the identity the bundle gives it (its
// ServiceAccount, impersonated), with the bundle's Configuration, so a
// verb missing from its ClusterRole fails a test instead of a user's
// install. Webhooks and the pending-workloads API are left out: the API
// server cannot reach a manager in the test process through the bundle's
// Services (the e2e suite runs them).

// installWithoutWebhooks applies the bundle and removes its webhook
// configurations, which call a Service no manager serves here.
func installWithoutWebhooks(t *testing.T) {
	t.Helper()
	kubectl(t, "apply", "--server-side", "-f", bundlePath())
	kubectl(t, "delete", "--ignore-not-found", "mutatingwebhookconfiguration/kueue-mutating-webhook-configuration",
		"validatingwebhookconfiguration/kueue-validating-webhook-configuration")
}

// newManager builds a manager with the bundle's Configuration, acting as
// identity, its health probes on health.
func newManager(t *testing.T, identity *rest.Config, health string) (*app.Manager, error) {
	t.Helper()
	cfg := shippedConfig(t, documents(t, kubectl(t, "kustomize", repoRoot+"/config/default")))
	return app.New(app.Options{RestConfig: identity, Config: cfg, MetricsBindAddress: ptr.To("0"), HealthBindAddress: &health,
		SecureMetrics: ptr.To(false), SkipControllerNameValidation: true, Visibility: ptr.To(false)})
}

// startManager runs the bundle's Configuration as identity and returns
// the address of its health probes.
func startManager(t *testing.T, identity *rest.Config) string {
	t.Helper()
	health := freeAddress(t)
	m, err := newManager(t, identity, health)
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("the manager did not stop within 60s")
		}
	})
	return health
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// readyz returns the status code and body of the manager's /readyz.
func readyz(addr string) (int, string, error) {
	resp, err := http.Get("http://" + addr + "/readyz?verbose")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestManagerAdmitsUnderItsServiceAccount: installed from the bundle, the
// manager may read and write all it needs: a queued Job is admitted and
// started, and the manager reports ready.
func TestManagerAdmitsUnderItsServiceAccount(t *testing.T) {
	installWithoutWebhooks(t)
	health := startManager(t, framework.AsManager(restConfig))
	ctx := context.Background()
	ns := createNamespace(t, "rbac-")
	for _, o := range (framework.Queues{Nominal: framework.CPU("2"), LocalQueues: []string{"lq"}}).Objects(ns) {
		if err := kubeClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: framework.CPU("1")}}}}}},
	}
	if err := kubeClient.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	var last string
	deadline := time.Now().Add(60 * time.Second)
	for !admittedAndStarted(ctx, ns, &last) {
		if time.Now().After(deadline) {
			t.Fatalf("the Job was not admitted and started by the manager under its service account within 60s: %s", last)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, body, err := readyz(health); err != nil || code != http.StatusOK {
		t.Errorf("readyz: %d %v\n%s", code, err, body)
	}
	// Nothing it tried was refused.
	for _, line := range strings.Split(managerLog.String(), "\n") {
		if strings.Contains(line, "forbidden") {
			t.Errorf("the manager was refused something: %s", line)
		}
	}
}

// admittedAndStarted reports whether ns's one Workload is admitted and its
// Job unsuspended, and otherwise what is missing in *last.
func admittedAndStarted(ctx context.Context, ns string, last *string) bool {
	wls := &kueue.WorkloadList{}
	if err := kubeClient.List(ctx, wls, client.InNamespace(ns)); err != nil || len(wls.Items) != 1 {
		*last = fmt.Sprintf("workloads: %v, %d", err, len(wls.Items))
		return false
	}
	if !meta.IsStatusConditionTrue(wls.Items[0].Status.Conditions, kueue.WorkloadAdmitted) {
		*last = fmt.Sprintf("workload conditions %v", wls.Items[0].Status.Conditions)
		return false
	}
	j := &batchv1.Job{}
	if err := kubeClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "j"}, j); err != nil || ptr.Deref(j.Spec.Suspend, true) {
		*last = fmt.Sprintf("job still suspended (%v)", err)
		return false
	}
	return true
}

// TestManagerWithoutAVerbSaysSo: a manager whose ClusterRole lacks a verb
// it needs does not start, and says which verb on which resource.
func TestManagerWithoutAVerbSaysSo(t *testing.T) {
	installWithoutWebhooks(t)
	ctx := context.Background()
	role := &rbacv1.ClusterRole{}
	if err := kubeClient.Get(ctx, types.NamespacedName{Name: "kueue-manager-role"}, role); err != nil {
		t.Fatal(err)
	}
	// The bundle's role without cohorts (the informer the feed opens).
	trimmed := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "kuota-test-no-cohorts"}}
	for _, r := range role.Rules {
		r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return res == "cohorts" })
		if len(r.Resources) > 0 || len(r.NonResourceURLs) > 0 {
			trimmed.Rules = append(trimmed.Rules, r)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "kuota-test-no-cohorts"}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kuota-test-no-cohorts"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: trimmed.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa.Name}}}
	for _, o := range []client.Object{trimmed, sa, binding} {
		if err := kubeClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kubeClient.Delete(context.Background(), o) })
	}
	_, err := newManager(t, framework.AsServiceAccount(restConfig, namespace, sa.Name), freeAddress(t))
	if err == nil {
		t.Fatal("the manager was built without permission to read Cohorts")
	}
	if want := "may not get cohorts.kueue.x-k8s.io, list cohorts.kueue.x-k8s.io, watch cohorts.kueue.x-k8s.io"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func createNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := kubeClient.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
