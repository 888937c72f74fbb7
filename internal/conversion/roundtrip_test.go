package conversion

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/tas"
)

// filler fills v1beta2 objects with random content that the API server
// could store: valid priority class references, topology assignments in
// the encoding the manager writes, distinct admission check names.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(8).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.Unix(c.Int63n(2_000_000_000), 0).Rfc3339Copy()
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name, m.Namespace = "n"+strconv.Itoa(c.Intn(100)), "ns"
			m.Labels = map[string]string{"l": c.String(5)}
			m.ResourceVersion = strconv.Itoa(c.Intn(1000))
		},
		func(p *corev1.PodTemplateSpec, c randfill.Continue) {
			p.Spec.Containers = []corev1.Container{{Name: "c", Image: c.String(8)}}
		},
		func(r *v1beta2.PriorityClassRef, c randfill.Continue) {
			if c.Bool() {
				*r = v1beta2.PriorityClassRef{Group: v1beta2.WorkloadPriorityClassGroup, Kind: v1beta2.WorkloadPriorityClassKind}
			} else {
				*r = v1beta2.PriorityClassRef{Group: v1beta2.PodPriorityClassGroup, Kind: v1beta2.PodPriorityClassKind}
			}
			r.Name = "class-" + strconv.Itoa(c.Intn(10))
		},
		func(a *v1beta2.TopologyAssignment, c randfill.Continue) {
			levels := []string{"block", "rack", corev1.LabelHostname}[:1+c.Intn(3)]
			var domains []tas.Domain
			for i := range 1 + c.Intn(12) {
				vals := make([]string, len(levels))
				for l := range levels {
					vals[l] = fmt.Sprintf("%s-%d", levels[l], (i>>l)%4)
				}
				domains = append(domains, tas.Domain{Values: vals, Count: 1 + int32(c.Intn(3))})
			}
			*a = *tas.Encode(levels, domains)
		},
		func(s *v1beta2.AdmissionChecksStrategy, c randfill.Continue) {
			for i := range 1 + c.Intn(3) {
				r := v1beta2.AdmissionCheckStrategyRule{Name: v1beta2.AdmissionCheckReference("check-" + strconv.Itoa(i))}
				if c.Intn(3) == 0 {
					r.OnFlavors = []v1beta2.ResourceFlavorReference{"f"}
				}
				s.AdmissionChecks = append(s.AdmissionChecks, r)
			}
		},
		func(k *v1beta2.KubeConfig, c randfill.Continue) {
			k.Location = c.String(6)
			k.LocationType = []v1beta2.LocationType{v1beta2.SecretLocationType, v1beta2.PathLocationType}[c.Intn(2)]
		},
	)
}

// roundTrip sends obj (v1beta2) down to v1beta1 and back up through the
// webhook's JSON path, and fails unless it comes back the same.
func roundTrip(t *testing.T, seed int64, obj runtime.Object, back runtime.Object) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	down, err := Convert(raw, "kueue.x-k8s.io/v1beta1")
	if err != nil {
		t.Fatalf("seed %d: down: %v", seed, err)
	}
	up, err := Convert(down, "kueue.x-k8s.io/v1beta2")
	if err != nil {
		t.Fatalf("seed %d: up: %v\nv1beta1: %s", seed, err, down)
	}
	want := obj.DeepCopyObject()
	if err := json.Unmarshal(raw, want); err != nil { // as the API server would hold it
		t.Fatal(err)
	}
	if err := json.Unmarshal(up, back); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(want, back) {
		t.Fatalf("seed %d: v1beta2 -> v1beta1 -> v1beta2 changed the object\nbefore: %s\nv1beta1: %s\nafter:  %s", seed, raw, down, up)
	}
}

// TestRoundTripKeepsEverything: what a v1beta1 client reads and writes back
// unchanged must reach storage unchanged, every v1beta2-only field
// included.
func TestRoundTripKeepsEverything(t *testing.T) {
	kinds := []struct {
		kind   string
		newObj func() runtime.Object
	}{
		{"ClusterQueue", func() runtime.Object { return &v1beta2.ClusterQueue{} }},
		{"LocalQueue", func() runtime.Object { return &v1beta2.LocalQueue{} }},
		{"Cohort", func() runtime.Object { return &v1beta2.Cohort{} }},
		{"MultiKueueCluster", func() runtime.Object { return &v1beta2.MultiKueueCluster{} }},
		{"Workload", func() runtime.Object { return &v1beta2.Workload{} }},
	}
	if len(kinds) != len(Kinds) {
		t.Fatalf("%d kinds round-tripped here, %d converted", len(kinds), len(Kinds))
	}
	for seed := range int64(300) {
		f := filler(seed)
		for _, k := range kinds {
			obj := k.newObj()
			f.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(v1beta2.GroupVersion.WithKind(k.kind))
			roundTrip(t, seed, obj, k.newObj())
		}
	}
}
