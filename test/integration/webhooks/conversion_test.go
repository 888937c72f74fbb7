package webhooks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/conversion"
	"github.com/kuota-dev/kuota/internal/tas"
)

func v1beta1Object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func getV1beta1(ctx context.Context, kind string, key types.NamespacedName) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("kueue.x-k8s.io/v1beta1")
	u.SetKind(kind)
	return u, env.Client.Get(ctx, key, u)
}

// TestV1beta1IsServedThroughTheConversionWebhook: with the manager in
// local mode, the API server converts kueue.x-k8s.io/v1beta1 objects
// through the manager, both ways, and a v1beta1 update keeps what only
// v1beta2 can say.
func TestV1beta1IsServedThroughTheConversionWebhook(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	stop := startManager(t, app.Options{Config: cfg, LocalWebhooks: true, WebhookManifests: []byte(testManifests)})
	eventually(t, 30*time.Second, "conversion registered on every converted CRD", func() error {
		for _, name := range conversion.CRDNames() {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
				return err
			}
			if c := crd.Spec.Conversion; c == nil || c.Webhook == nil || !strings.HasSuffix(ptr.Deref(c.Webhook.ClientConfig.URL, ""), "/convert") {
				return fmt.Errorf("%s conversion: %+v", name, c)
			}
		}
		return nil
	})

	// A ClusterQueue in v1beta1, as Kueue's older docs write it.
	cq := v1beta1Object(t, `
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: v1beta1-cq}
spec:
  cohort: research
  admissionChecks: [prov]
  flavorFungibility: {whenCanBorrow: Borrow}
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 9, borrowingLimit: 1}]
`)
	// The API server takes a moment to see the new conversion.
	eventually(t, 30*time.Second, "v1beta1 ClusterQueue created", func() error { return env.Client.Create(ctx, cq.DeepCopy()) })
	got := &kueue.ClusterQueue{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "v1beta1-cq"}, got); err != nil {
		t.Fatal(err)
	}
	s := got.Spec
	if s.CohortName != "research" || s.AdmissionChecksStrategy == nil || len(s.AdmissionChecksStrategy.AdmissionChecks) != 1 ||
		s.FlavorFungibility.WhenCanBorrow != kueue.MayStopSearch || s.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit == nil {
		t.Errorf("stored as v1beta2: %+v, want cohortName research, check prov, whenCanBorrow MayStopSearch, a borrowing limit", s)
	}

	// A v1beta2-only field survives a v1beta1 read-modify-write.
	// (The manager's controllers write the queue too: retry on conflicts.)
	key := types.NamespacedName{Name: "v1beta1-cq"}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, key, got); err != nil {
			return err
		}
		got.Spec.ConcurrentAdmissionPolicy = &kueue.ConcurrentAdmissionPolicy{Migration: kueue.ConcurrentAdmissionMigration{Mode: kueue.RetainFirstAdmission}}
		return env.Client.Update(ctx, got)
	}); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		old, err := getV1beta1(ctx, "ClusterQueue", key)
		if err != nil {
			return err
		}
		if cohort, _, _ := unstructured.NestedString(old.Object, "spec", "cohort"); cohort != "research" {
			t.Errorf("v1beta1 spec.cohort = %q, want research", cohort)
		}
		old.SetLabels(map[string]string{"touched": "in-v1beta1"})
		return env.Client.Update(ctx, old)
	}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "v1beta1-cq"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["touched"] != "in-v1beta1" || got.Spec.ConcurrentAdmissionPolicy == nil || got.Spec.CohortName != "research" {
		t.Errorf("after a v1beta1 update: labels %v, concurrentAdmissionPolicy %v, cohortName %q", got.Labels, got.Spec.ConcurrentAdmissionPolicy, got.Spec.CohortName)
	}

	// A Workload written in v1beta2, with a topology assignment, read in v1beta1.
	ns, err := env.CreateNamespace(ctx, "conversion")
	if err != nil {
		t.Fatal(err)
	}
	wl := v1beta1Object(t, `
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w}
spec:
  queueName: q
  priorityClassName: high
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 100
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
`)
	wl.SetNamespace(ns)
	if err := env.Client.Patch(ctx, wl, client.Apply, client.FieldOwner("conversion-test")); err != nil { //nolint:staticcheck // as kubectl apply --server-side sends it
		t.Fatal(err)
	}
	w := &kueue.Workload{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w"}, w); err != nil {
		t.Fatal(err)
	}
	if r := w.Spec.PriorityClassRef; r == nil || r.Kind != kueue.WorkloadPriorityClassKind || r.Name != "high" {
		t.Errorf("priorityClassRef = %+v, want WorkloadPriorityClass high", r)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		w.Status.Admission = &kueue.Admission{ClusterQueue: "v1beta1-cq", PodSetAssignments: []kueue.PodSetAssignment{{
			Name: "main", Count: ptr.To[int32](2),
			TopologyAssignment: tas.Encode([]string{"kubernetes.io/hostname"}, []tas.Domain{{Values: []string{"node-a"}, Count: 1}, {Values: []string{"node-b"}, Count: 1}}),
		}}}
		return env.Client.Status().Update(ctx, w)
	}); err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("kueue.x-k8s.io/v1beta1")
	list.SetKind("WorkloadList")
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("listed %d v1beta1 Workloads, want 1", len(list.Items))
	}
	item := list.Items[0].Object
	source, _, _ := unstructured.NestedString(item, "spec", "priorityClassSource")
	psa, _, _ := unstructured.NestedSlice(item, "status", "admission", "podSetAssignments")
	if source != "kueue.x-k8s.io/workloadpriorityclass" || len(psa) != 1 {
		t.Fatalf("v1beta1 Workload: source %q, %d assignments", source, len(psa))
	}
	domains, _, _ := unstructured.NestedSlice(psa[0].(map[string]any), "topologyAssignment", "domains")
	if len(domains) != 2 || fmt.Sprint(domains[1].(map[string]any)["values"]) != "[node-b]" {
		t.Errorf("v1beta1 topology domains = %v, want node-a and node-b one by one", domains)
	}

	// With the manager gone, v1beta1 requests fail and say why, rather
	// than storing a ClusterQueue without its cohort; v1beta2 is untouched.
	stop()
	late := cq.DeepCopy()
	late.SetName("v1beta1-late")
	err = env.Client.Create(ctx, late)
	if err == nil || !strings.Contains(err.Error(), "conversion webhook") {
		t.Errorf("v1beta1 create with the manager gone: %v, want a conversion webhook error", err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "v1beta1-cq"}, got); err != nil {
		t.Errorf("v1beta2 read with the manager gone: %v", err)
	}
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Error(err)
	}
}
