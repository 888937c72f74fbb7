package admission

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// expectDenied fails unless err is a denial by the named webhook whose
// message names the field.
func expectDenied(t *testing.T, err error, webhook, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want a denial by %s naming %s", webhook, field)
	}
	msg := err.Error()
	if !strings.Contains(msg, `admission webhook "`+webhook+`" denied the request`) || !strings.Contains(msg, field) {
		t.Fatalf("want a denial by %s naming %s, got: %v", webhook, field, err)
	}
	t.Logf("denied as expected: %v", err)
}

func flavorQuotas(name kueue.ResourceFlavorReference, cpu string) kueue.FlavorQuotas {
	return kueue.FlavorQuotas{Name: name, Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse(cpu)}}}
}

func newClusterQueue(name string) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"},
			Flavors: []kueue.FlavorQuotas{flavorQuotas("default", "10")}}},
	}}
}

// removeFinalizers drops an object's finalizers and deletes it (no
// controller runs here to do it).
func removeFinalizers(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	obj.SetFinalizers(nil)
	if err := k8s.Patch(ctx, obj, patch); err != nil {
		t.Errorf("removing finalizers of %s: %v", obj.GetName(), err)
	}
	if err := client.IgnoreNotFound(k8s.Delete(ctx, obj)); err != nil {
		t.Errorf("deleting %s: %v", obj.GetName(), err)
	}
}

func TestFinalizerIsAddedOnCreate(t *testing.T) {
	ctx := context.Background()
	cq := newClusterQueue("finalizer-cq")
	rf := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "finalizer-rf"}}
	co := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "finalizer-co"}}
	for _, obj := range []client.Object{cq, rf, co} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
		t.Cleanup(func() { removeFinalizers(t, obj) })
	}
	for _, obj := range []client.Object{cq, rf} {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(obj.GetFinalizers(), kueue.ResourceInUseFinalizerName) {
			t.Errorf("%T %s has finalizers %v, want %s", obj, obj.GetName(), obj.GetFinalizers(), kueue.ResourceInUseFinalizerName)
		}
	}
	if len(co.Finalizers) != 0 {
		t.Errorf("a Cohort got finalizers %v", co.Finalizers)
	}
	// Updates that only touch metadata pass, and the finalizer can go.
	removeFinalizers(t, cq)
}

func TestInvalidObjectsAreRejected(t *testing.T) {
	ctx := context.Background()
	lending := newClusterQueue("invalid-cq")
	lending.Spec.CohortName = "co"
	lending.Spec.ResourceGroups[0].Flavors[0].Resources[0].LendingLimit = ptr.To(resource.MustParse("11"))
	expectDenied(t, k8s.Create(ctx, lending), "vclusterqueue.kb.io", "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit")

	dupFlavor := newClusterQueue("invalid-cq")
	dupFlavor.Spec.ResourceGroups = append(dupFlavor.Spec.ResourceGroups, kueue.ResourceGroup{
		CoveredResources: []corev1.ResourceName{"memory"},
		Flavors:          []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: "memory", NominalQuota: resource.MustParse("1Gi")}}}},
	})
	expectDenied(t, k8s.Create(ctx, dupFlavor), "vclusterqueue.kb.io", "spec.resourceGroups[1].flavors[0].name")

	rf := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "invalid-rf"}, Spec: kueue.ResourceFlavorSpec{
		NodeTaints: []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Value: "x", Effect: corev1.TaintEffectNoSchedule}},
	}}
	expectDenied(t, k8s.Create(ctx, rf), "vresourceflavor.kb.io", "spec.nodeTaints[1]")

	co := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "invalid-co"}, Spec: kueue.CohortSpec{
		FairSharing: &kueue.FairSharing{Weight: ptr.To(resource.MustParse("-1"))},
	}}
	expectDenied(t, k8s.Create(ctx, co), "vcohort.kb.io", "spec.fairSharing.weight")

	wl := newWorkload("invalid-wl")
	wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests["pods"] = resource.MustParse("1")
	expectDenied(t, k8s.Create(ctx, wl), "vworkload.kb.io", "spec.podSets[0].template.spec.containers[0].resources.requests[pods]")
}

func TestClusterQueueUpdates(t *testing.T) {
	ctx := context.Background()
	cq := newClusterQueue("update-cq")
	if err := k8s.Create(ctx, cq); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeFinalizers(t, cq) })
	bad := cq.DeepCopy()
	bad.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{
		{Name: "prov", OnFlavors: []kueue.ResourceFlavorReference{"elsewhere"}},
	}}
	expectDenied(t, k8s.Update(ctx, bad), "vclusterqueue.kb.io", "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]")
	good := cq.DeepCopy()
	good.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("20")
	if err := k8s.Update(ctx, good); err != nil {
		t.Fatalf("valid update rejected: %v", err)
	}
}

// TestKueueExamplesAreAccepted creates, as a server-side dry run (which
// runs every admission step but stores nothing), every ResourceFlavor,
// ClusterQueue, Cohort and Workload of Kueue's examples.
func TestKueueExamplesAreAccepted(t *testing.T) {
	ctx := context.Background()
	objs := kueueExamples(t)
	if len(objs) < 30 {
		t.Fatalf("found only %d objects of the webhooks' kinds in Kueue's examples; the reference data looks incomplete", len(objs))
	}
	for _, ex := range objs {
		if ex.Obj.GetNamespace() == "" && ex.Obj.GetKind() == "Workload" {
			ex.Obj.SetNamespace("default")
		}
		if err := k8s.Create(ctx, ex.Obj, client.DryRunAll); err != nil {
			t.Errorf("%s: %s %s rejected: %v", ex.File, ex.Obj.GetKind(), ex.Obj.GetName(), err)
		}
	}
	t.Logf("created %d example objects (dry run)", len(objs))
	// A dry run goes through the webhooks too.
	bad := newClusterQueue("dry-run")
	bad.Spec.FairSharing = &kueue.FairSharing{Weight: ptr.To(resource.MustParse("-1"))}
	expectDenied(t, k8s.Create(ctx, bad, client.DryRunAll), "vclusterqueue.kb.io", "spec.fairSharing.weight")
}
