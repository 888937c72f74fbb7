package webhook

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := kueue.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFinalizerDefaulter(t *testing.T) {
	ctx := context.Background()
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Finalizers: []string{"example.com/keep"}}}
	if err := (finalizerDefaulter[*kueue.ClusterQueue]{}).Default(ctx, cq); err != nil {
		t.Fatal(err)
	}
	if err := (finalizerDefaulter[*kueue.ClusterQueue]{}).Default(ctx, cq); err != nil {
		t.Fatal(err)
	}
	if want := []string{"example.com/keep", kueue.ResourceInUseFinalizerName}; !slices.Equal(cq.Finalizers, want) {
		t.Errorf("finalizers = %v, want %v", cq.Finalizers, want)
	}
	deleting := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "rf", DeletionTimestamp: ptr.To(metav1.Now())}}
	if err := (finalizerDefaulter[*kueue.ResourceFlavor]{}).Default(ctx, deleting); err != nil {
		t.Fatal(err)
	}
	if len(deleting.Finalizers) != 0 {
		t.Errorf("a flavor being deleted got finalizers %v", deleting.Finalizers)
	}
}

func TestValidatorReturnsInvalidNamingTheField(t *testing.T) {
	ctx := context.Background()
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		CohortName: "co",
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{{
			Name: "a", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("1"), LendingLimit: ptr.To(resource.MustParse("2"))}},
		}}}},
	}}
	_, err := clusterQueueValidator.ValidateCreate(ctx, cq)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error, got %v", err)
	}
	const field = "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit"
	if !strings.Contains(err.Error(), field) {
		t.Errorf("error %q does not name %s", err, field)
	}
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != field {
		t.Errorf("causes = %+v, want one for %s", causes, field)
	}
	cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].LendingLimit = nil
	if _, err := clusterQueueValidator.ValidateCreate(ctx, cq); err != nil {
		t.Errorf("valid queue rejected: %v", err)
	}
	if _, err := clusterQueueValidator.ValidateDelete(ctx, cq); err != nil {
		t.Errorf("delete rejected: %v", err)
	}
}

// request builds an admission request carrying objects as JSON.
func request(t testing.TB, op admissionv1.Operation, obj, old runtime.Object) admission.Request {
	t.Helper()
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: data}
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Operation: op, Object: raw(obj), OldObject: raw(old),
	}}
}

func TestHandlers(t *testing.T) {
	ctx := context.Background()
	scheme := testScheme(t)
	mutate := admission.WithDefaulter(scheme, admission.Defaulter[*kueue.ResourceFlavor](finalizerDefaulter[*kueue.ResourceFlavor]{}))
	rf := &kueue.ResourceFlavor{TypeMeta: metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: "ResourceFlavor"},
		ObjectMeta: metav1.ObjectMeta{Name: "rf"}}
	resp := mutate.Handle(ctx, request(t, admissionv1.Create, rf, nil))
	if !resp.Allowed || len(resp.Patches) != 1 || resp.Patches[0].Path != "/metadata/finalizers" {
		t.Errorf("defaulting response: allowed=%v patches=%+v", resp.Allowed, resp.Patches)
	}

	validate := admission.WithValidator(scheme, admission.Validator[*kueue.Workload](workloadValidator))
	wl := &kueue.Workload{TypeMeta: metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: "Workload"},
		ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: "ns"},
		Spec:       kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 1}}}}
	if resp := validate.Handle(ctx, request(t, admissionv1.Create, wl, nil)); !resp.Allowed {
		t.Errorf("valid workload denied: %+v", resp.Result)
	}
	reserved := wl.DeepCopy()
	reserved.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1)}}}
	resp = validate.Handle(ctx, request(t, admissionv1.Update, reserved, wl))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "status.admission") {
		t.Errorf("admission without QuotaReserved: allowed=%v message=%q", resp.Allowed, resp.Result.Message)
	}
	reserved.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"}}
	if resp := validate.Handle(ctx, request(t, admissionv1.Update, reserved, wl)); !resp.Allowed {
		t.Errorf("reservation denied: %+v", resp.Result)
	}
}
