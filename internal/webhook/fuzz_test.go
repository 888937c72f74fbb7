package webhook

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Plain `go test` runs only the seeds below; `make fuzz` explores.

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kind}
}

func seedWorkloads() []runtime.Object {
	pending := &kueue.Workload{TypeMeta: typeMeta("Workload"), ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: "ns"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{
			{Name: "main", Count: 3, MinCount: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1Gi")}}}}}},
				TopologyRequest: &kueue.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](1)}},
		}}}
	reserved := pending.DeepCopy()
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reserved.Status = kueue.WorkloadStatus{
		Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: now}},
		Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](2),
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "a", "memory": "a"},
			ResourceUsage: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("2Gi")}}}},
		ReclaimablePods: []kueue.ReclaimablePod{{Name: "main", Count: 1}},
		AdmissionChecks: []kueue.AdmissionCheckState{{Name: "prov", State: kueue.CheckStateReady, LastTransitionTime: now,
			PodSetUpdates: []kueue.PodSetUpdate{{Name: "main", NodeSelector: map[string]string{"pool": "p"}}}}},
		NominatedClusterNames: []string{"worker-1"},
	}
	return []runtime.Object{pending, reserved}
}

func seedClusterQueues() []runtime.Object {
	cq := &kueue.ClusterQueue{TypeMeta: typeMeta("ClusterQueue"), ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		CohortName: "co", NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "a", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("4"), LendingLimit: ptr.To(resource.MustParse("2"))}}},
		}}},
		AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "prov", OnFlavors: []kueue.ResourceFlavorReference{"a"}}}},
		FairSharing:             &kueue.FairSharing{Weight: ptr.To(resource.MustParse("2"))},
	}}
	withPolicy := cq.DeepCopy()
	withPolicy.Spec.ConcurrentAdmissionPolicy = &kueue.ConcurrentAdmissionPolicy{Migration: kueue.ConcurrentAdmissionMigration{Mode: kueue.TryPreferredFlavors}}
	return []runtime.Object{cq, withPolicy}
}

func seedResourceFlavors() []runtime.Object {
	return []runtime.Object{&kueue.ResourceFlavor{TypeMeta: typeMeta("ResourceFlavor"), ObjectMeta: metav1.ObjectMeta{Name: "rf"},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "spot"},
			NodeTaints:  []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
			Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}}}
}

func seedCohorts() []runtime.Object {
	return []runtime.Object{&kueue.Cohort{TypeMeta: typeMeta("Cohort"), ObjectMeta: metav1.ObjectMeta{Name: "co"}, Spec: kueue.CohortSpec{
		ParentName: "root",
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "a", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("4"), BorrowingLimit: ptr.To(resource.MustParse("1"))}}},
		}}}}}}
}

// fuzzWebhook feeds JSON through decode, default (when the kind has a
// defaulter), validate create and validate update (against itself and
// against each seed, both ways), twice: through controller-runtime's
// admission handlers and through the typed adapters. Nothing may panic,
// and every rejection must be an Invalid status.
func fuzzWebhook[T client.Object](f *testing.F, seeds []runtime.Object, defaulter admission.Defaulter[T], v admission.Validator[T]) {
	var seedJSON [][]byte
	for _, s := range seeds {
		data, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		seedJSON = append(seedJSON, data)
		f.Add(data)
	}
	scheme := testScheme(f)
	validating := admission.WithValidator(scheme, v)
	validating.RecoverPanic = ptr.To(false)
	var mutating *admission.Webhook
	if defaulter != nil {
		mutating = admission.WithDefaulter(scheme, defaulter)
		mutating.RecoverPanic = ptr.To(false)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		if mutating != nil {
			mutating.Handle(ctx, rawRequest(admissionv1.Create, data, nil))
		}
		validating.Handle(ctx, rawRequest(admissionv1.Create, data, nil))
		for _, seed := range seedJSON {
			validating.Handle(ctx, rawRequest(admissionv1.Update, data, seed))
			validating.Handle(ctx, rawRequest(admissionv1.Update, seed, data))
		}
		obj, ok := decodeTyped[T](data)
		if !ok {
			return
		}
		if defaulter != nil {
			if err := defaulter.Default(ctx, obj); err != nil {
				t.Fatalf("defaulting failed: %v", err)
			}
		}
		checkRejection(t, "create", ignoreWarnings(v.ValidateCreate(ctx, obj)))
		checkRejection(t, "update to itself", ignoreWarnings(v.ValidateUpdate(ctx, obj, obj.DeepCopyObject().(T))))
		for _, seed := range seedJSON {
			old, _ := decodeTyped[T](seed)
			checkRejection(t, "update from a seed", ignoreWarnings(v.ValidateUpdate(ctx, old, obj)))
			checkRejection(t, "update to a seed", ignoreWarnings(v.ValidateUpdate(ctx, obj, old)))
		}
	})
}

func rawRequest(op admissionv1.Operation, obj, old []byte) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "fuzz", Operation: op, Object: runtime.RawExtension{Raw: obj}, OldObject: runtime.RawExtension{Raw: old},
	}}
}

// decodeTyped decodes JSON into a new object of type T.
func decodeTyped[T client.Object](data []byte) (T, bool) {
	var zero T
	out := reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
	if err := json.Unmarshal(data, out); err != nil {
		return zero, false
	}
	return out, true
}

func ignoreWarnings(_ admission.Warnings, err error) error { return err }

func checkRejection(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && !apierrors.IsInvalid(err) {
		t.Fatalf("%s: rejection is not an Invalid status: %v", what, err)
	}
}

func FuzzWorkloadWebhook(f *testing.F) {
	fuzzWebhook[*kueue.Workload](f, seedWorkloads(), nil, workloadValidator)
}

func FuzzClusterQueueWebhook(f *testing.F) {
	fuzzWebhook[*kueue.ClusterQueue](f, seedClusterQueues(), finalizerDefaulter[*kueue.ClusterQueue]{}, clusterQueueValidator)
}

func FuzzResourceFlavorWebhook(f *testing.F) {
	fuzzWebhook[*kueue.ResourceFlavor](f, seedResourceFlavors(), finalizerDefaulter[*kueue.ResourceFlavor]{}, resourceFlavorValidator)
}

func FuzzCohortWebhook(f *testing.F) {
	fuzzWebhook[*kueue.Cohort](f, seedCohorts(), nil, cohortValidator)
}
