package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// overQuotaObjects: cq (no cohort, 1 cpu) holds a workload using 2 cpu and
// its status says nothing: 3 violations.
func overQuotaObjects() []client.Object {
	cq := &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec: kueue.ClusterQueueSpec{ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{
				{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1")},
			}}},
		}}},
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: "ns"},
		Spec:       kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 1}}},
		Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{{
				Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
				LastTransitionTime: metav1.Now(),
			}},
			Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{
				Name:          "main",
				Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "f"},
				ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Count:         ptr.To[int32](1),
			}}},
		},
	}
	return []client.Object{cq, wl, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "f"}}}
}

// stuckWorkload finished and was deleted 5 minutes ago, finalizer still on.
func stuckWorkload() client.Object {
	ago := metav1.NewTime(time.Now().Add(-5 * time.Minute))
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name: "stuck", Namespace: "ns", DeletionTimestamp: &ago,
			Finalizers: []string{kueue.ResourceInUseFinalizerName},
		},
		Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 1}}},
		Status: kueue.WorkloadStatus{Conditions: []metav1.Condition{{
			Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: ago,
		}}},
	}
}

// fakeConnect serves objs and records the kubeconfig paths it was given.
func fakeConnect(t *testing.T, paths *[]string, objs ...client.Object) connectFunc {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	return func(kubeconfig string) (client.Reader, error) {
		*paths = append(*paths, kubeconfig)
		return c, nil
	}
}

func runAudit(t *testing.T, connect connectFunc, args ...string) (string, error) {
	t.Helper()
	env, out, errOut := testEnv(t)
	cmd := newAuditCommand("kuota", env, connect)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true // as under the root command
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestAuditReportsViolations(t *testing.T) {
	var paths []string
	out, err := runAudit(t, fakeConnect(t, &paths, overQuotaObjects()...), "--kubeconfig", "/tmp/kc")
	if err == nil || err.Error() != "3 violations" {
		t.Errorf("audit = %v, want error %q", err, "3 violations")
	}
	for _, want := range []string{
		"Audited 1 workloads, 1 cluster queues, 0 cohorts, 1 resource flavors, 0 pods of managed jobs: 3 violations.",
		"[NominalQuotaExceeded] ClusterQueue cq: without a cohort, uses 2 of f/cpu, above its nominal quota 1",
		"[StatusMismatch] ClusterQueue cq: status.reservingWorkloads is 0, but 1 workloads hold a reservation",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !slices.Equal(paths, []string{"/tmp/kc"}) {
		t.Errorf("connect got kubeconfig %q, want /tmp/kc", paths)
	}
}

func TestAuditCleanCluster(t *testing.T) {
	var paths []string
	out, err := runAudit(t, fakeConnect(t, &paths))
	if err != nil {
		t.Errorf("audit = %v, want nil", err)
	}
	if !strings.Contains(out, "no violations") {
		t.Errorf("output = %q", out)
	}
	if !slices.Equal(paths, []string{""}) {
		t.Errorf("connect got kubeconfig %q, want the default (empty)", paths)
	}
}

func TestAuditFinalizerGrace(t *testing.T) {
	var paths []string
	connect := fakeConnect(t, &paths, stuckWorkload())
	out, err := runAudit(t, connect)
	if err == nil || err.Error() != "1 violation" || !strings.Contains(out, "[LeftoverFinalizer] Workload ns/stuck") {
		t.Errorf("default grace: err %v, output:\n%s", err, out)
	}
	if out, err := runAudit(t, connect, "--finalizer-grace", "10m"); err != nil {
		t.Errorf("--finalizer-grace 10m: err %v, output:\n%s", err, out)
	}
}

// runningPod runs on a node and names the Workload "wl" of
// overQuotaObjects' namespace, which is not admitted (QuotaReserved only).
func runningPod() client.Object {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: map[string]string{"kueue.x-k8s.io/workload": "wl"}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestAuditChecksPodsUnlessTold(t *testing.T) {
	var paths []string
	connect := fakeConnect(t, &paths, append(overQuotaObjects(), runningPod())...)
	out, err := runAudit(t, connect)
	want := "[PodWithoutAdmission] Pod ns/p: runs on node node-1 but its Workload wl is not admitted (QuotaReserved is True, Admitted is not set)"
	if err == nil || err.Error() != "4 violations" || !strings.Contains(out, want) || !strings.Contains(out, "1 pods of managed jobs") {
		t.Errorf("default: err %v, output:\n%s\nwant it to contain %q", err, out, want)
	}
	out, err = runAudit(t, connect, "--pods=false")
	if err == nil || err.Error() != "3 violations" || strings.Contains(out, "Pod ns/p") || strings.Contains(out, "pods") {
		t.Errorf("--pods=false: err %v, output:\n%s", err, out)
	}
}

func TestAuditReaderKnowsPods(t *testing.T) {
	env, _, _ := testEnv(t)
	kc := unreachableKubeconfig(t, env.WorkingDir)
	r, err := newKueueReader(env, kc)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := r.(client.Client)
	if !ok {
		t.Fatalf("reader is a %T", r)
	}
	for _, obj := range []runtime.Object{&corev1.PodList{}, &kueue.WorkloadList{}} {
		if _, _, err := c.Scheme().ObjectKinds(obj); err != nil {
			t.Errorf("the audit's client cannot read %T: %v", obj, err)
		}
	}
}

func TestAuditFlagErrors(t *testing.T) {
	connectErr := errors.New("no cluster")
	failing := func(string) (client.Reader, error) { return nil, connectErr }
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--finalizer-grace", "0s"}, "--finalizer-grace must be positive, got 0s"},
		{[]string{"--finalizer-grace", "soon"}, `invalid argument "soon" for "--finalizer-grace"`},
		{[]string{"extra"}, `unknown command "extra"`},
		{nil, "no cluster"},
	}
	for _, tc := range tests {
		_, err := runAudit(t, failing, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("audit %q = %v, want an error containing %q", tc.args, err, tc.wantErr)
		}
	}
}

func TestAuditRegisteredAndLoadsKubeconfig(t *testing.T) {
	env, _, _ := testEnv(t)
	kc := unreachableKubeconfig(t, env.WorkingDir)
	env.Getenv = func(k string) string {
		if k == clientcmd.RecommendedConfigPathEnvVar {
			return kc
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root := NewRootCommand("kuota", env)
	root.SetArgs([]string{"audit"})
	err := root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "listing pods") {
		t.Errorf("audit against a closed port = %v, want a listing error", err)
	}

	root = NewRootCommand("kuota", env)
	root.SetArgs([]string{"audit", "--kubeconfig", filepath.Join(env.WorkingDir, "missing")})
	err = root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "loading kubeconfig") {
		t.Errorf("audit with a missing kubeconfig = %v, want a loading error", err)
	}
}

func TestKubeconfigRules(t *testing.T) {
	env := Env{Getenv: func(string) string { return "/a" + string(filepath.ListSeparator) + "/b" }}
	r := kubeconfigRules(env, "")
	if !slices.Equal(r.Precedence, []string{"/a", "/b"}) || r.ExplicitPath != "" {
		t.Errorf("rules from $KUBECONFIG = %q, %q", r.Precedence, r.ExplicitPath)
	}
	env.Getenv = func(string) string { return "" }
	r = kubeconfigRules(env, "/x")
	if !slices.Equal(r.Precedence, []string{clientcmd.RecommendedHomeFile}) || r.ExplicitPath != "/x" {
		t.Errorf("default rules = %q, %q", r.Precedence, r.ExplicitPath)
	}
}

// unreachableKubeconfig writes into dir a kubeconfig whose server answers
// nothing, and returns its path.
func unreachableKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	kc := filepath.Join(dir, "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kc, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}
