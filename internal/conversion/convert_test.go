package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/tas"
)

func up(t *testing.T, manifest string, out any) {
	t.Helper()
	raw, err := Convert([]byte(manifest), "kueue.x-k8s.io/v1beta2")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
}

// A v1beta1 ClusterQueue as Kueue's older docs write it.
func TestClusterQueueUp(t *testing.T) {
	var cq v1beta2.ClusterQueue
	up(t, `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"team-a"},
	  "spec":{"cohort":"research","admissionChecks":["prov","mk"],
	    "admissionChecksStrategy":{"admissionChecks":[{"name":"prov","onFlavors":["gpu"]}]},
	    "flavorFungibility":{"whenCanBorrow":"Borrow","whenCanPreempt":"Preempt"},
	    "resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default","resources":[{"name":"cpu","nominalQuota":"9","borrowingLimit":"1"}]}]}]},
	  "status":{"pendingWorkloads":3,"pendingWorkloadsStatus":{"lastChangeTime":"2026-01-01T00:00:00Z"},
	    "fairSharing":{"weightedShare":7,"admissionFairSharingStatus":{"consumedResources":{},"lastUpdate":"2026-01-01T00:00:00Z"}}}}`, &cq)
	if cq.APIVersion != "kueue.x-k8s.io/v1beta2" || cq.Spec.CohortName != "research" {
		t.Errorf("apiVersion %q cohortName %q, want v1beta2 and research", cq.APIVersion, cq.Spec.CohortName)
	}
	rules := cq.Spec.AdmissionChecksStrategy.AdmissionChecks
	if len(rules) != 2 || rules[0].Name != "prov" || len(rules[0].OnFlavors) != 1 || rules[1].Name != "mk" || len(rules[1].OnFlavors) != 0 {
		t.Errorf("admission checks = %+v, want prov on gpu (the strategy's) and mk on every flavor", rules)
	}
	if ff := cq.Spec.FlavorFungibility; ff.WhenCanBorrow != v1beta2.MayStopSearch || ff.WhenCanPreempt != v1beta2.MayStopSearch {
		t.Errorf("fungibility = %+v, want Borrow and Preempt stored as MayStopSearch", ff)
	}
	if q := cq.Spec.ResourceGroups[0].Flavors[0].Resources[0]; q.BorrowingLimit.String() != "1" {
		t.Errorf("borrowingLimit = %v, want 1", q.BorrowingLimit)
	}
	if cq.Status.PendingWorkloads != 3 || cq.Status.FairSharing.WeightedShare != 7 {
		t.Errorf("status = %+v, want pending 3 and weighted share 7", cq.Status)
	}
}

func TestClusterQueueDownListsChecksOnEveryFlavorPlainly(t *testing.T) {
	cq := &v1beta2.ClusterQueue{Spec: v1beta2.ClusterQueueSpec{CohortName: "c",
		AdmissionChecksStrategy: &v1beta2.AdmissionChecksStrategy{AdmissionChecks: []v1beta2.AdmissionCheckStrategyRule{{Name: "a"}, {Name: "b"}}}}}
	down := ClusterQueueDown(cq)
	if down.Spec.Cohort != "c" || down.Spec.AdmissionChecksStrategy != nil || len(down.Spec.AdmissionChecks) != 2 {
		t.Errorf("v1beta1 spec = %+v, want cohort c and admissionChecks [a b]", down.Spec)
	}
	cq.Spec.AdmissionChecksStrategy.AdmissionChecks[1].OnFlavors = []v1beta2.ResourceFlavorReference{"gpu"}
	down = ClusterQueueDown(cq)
	if down.Spec.AdmissionChecks != nil || len(down.Spec.AdmissionChecksStrategy.AdmissionChecks) != 2 {
		t.Errorf("v1beta1 spec = %+v, want the strategy kept when a check is per flavor", down.Spec)
	}
}

func TestWorkloadUp(t *testing.T) {
	cases := map[string]struct {
		source string
		want   *v1beta2.PriorityClassRef
	}{
		"workload class": {"kueue.x-k8s.io/workloadpriorityclass", &v1beta2.PriorityClassRef{Group: "kueue.x-k8s.io", Kind: "WorkloadPriorityClass", Name: "high"}},
		"pod class":      {"scheduling.k8s.io/priorityclass", &v1beta2.PriorityClassRef{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "high"}},
		"no source":      {"", &v1beta2.PriorityClassRef{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "high"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var wl v1beta2.Workload
			up(t, `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"w","namespace":"ns"},
			  "spec":{"queueName":"q","priorityClassName":"high","priority":100,"priorityClassSource":"`+tc.source+`",
			    "podSets":[{"name":"main","count":3,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]},
			  "status":{"accumulatedPastExexcutionTimeSeconds":42,
			    "admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","count":3,
			      "topologyAssignment":{"levels":["rack","kubernetes.io/hostname"],
			        "domains":[{"values":["r1","n1"],"count":2},{"values":["r1","n2"],"count":1}]}}]}}}`, &wl)
			if *wl.Spec.PriorityClassRef != *tc.want || *wl.Spec.Priority != 100 {
				t.Errorf("priorityClassRef = %+v, want %+v", wl.Spec.PriorityClassRef, tc.want)
			}
			if ptr.Deref(wl.Status.AccumulatedPastExecutionTimeSeconds, 0) != 42 {
				t.Errorf("accumulatedPastExecutionTimeSeconds = %v, want 42", wl.Status.AccumulatedPastExecutionTimeSeconds)
			}
			domains, err := tas.Domains(wl.Status.Admission.PodSetAssignments[0].TopologyAssignment)
			if err != nil || len(domains) != 2 || domains[0].Values[1] != "n1" || domains[0].Count != 2 || domains[1].Values[1] != "n2" {
				t.Errorf("topology domains = %+v (%v), want n1:2 and n2:1 in rack r1", domains, err)
			}
		})
	}
}

func TestLocalQueueAndMultiKueueClusterUp(t *testing.T) {
	var lq v1beta2.LocalQueue
	up(t, `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"q","namespace":"ns"},
	  "spec":{"clusterQueue":"cq"},"status":{"flavorUsage":[{"name":"f","resources":[{"name":"cpu","total":"2"}]}],
	  "flavors":[{"name":"f","resources":["cpu"]}]}}`, &lq)
	if lq.Spec.ClusterQueue != "cq" || len(lq.Status.FlavorsUsage) != 1 || lq.Status.FlavorsUsage[0].Name != "f" {
		t.Errorf("local queue = %+v, want clusterQueue cq and flavorUsage as flavorsUsage", lq)
	}
	var mkc v1beta2.MultiKueueCluster
	up(t, `{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"MultiKueueCluster","metadata":{"name":"w1"},
	  "spec":{"kubeConfig":{"location":"w1-secret","locationType":"Secret"}}}`, &mkc)
	if kc := mkc.Spec.ClusterSource.KubeConfig; kc == nil || kc.Location != "w1-secret" || kc.LocationType != v1beta2.SecretLocationType {
		t.Errorf("clusterSource = %+v, want the kubeConfig under it", mkc.Spec.ClusterSource)
	}
}

func TestConvertErrorsNameTheObjectAndField(t *testing.T) {
	cases := map[string]struct{ raw, version, want string }{
		"domain values": {`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"w","namespace":"ns"},
		  "status":{"admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main",
		  "topologyAssignment":{"levels":["rack","kubernetes.io/hostname"],"domains":[{"values":["r1"],"count":1}]}}]}}}`,
			"kueue.x-k8s.io/v1beta2", "Workload ns/w: status.admission.podSetAssignments[0].topologyAssignment.domains[0].values: 1 values for 2 levels"},
		"malformed slices": {`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"w","namespace":"ns"},
		  "status":{"admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main",
		  "topologyAssignment":{"levels":["rack"],"slices":[{"domainCount":2,"valuesPerLevel":[{"universal":"r"}],"podCounts":{"individual":[1]}}]}}]}}}`,
			"kueue.x-k8s.io/v1beta1", "status.admission.podSetAssignments[0].topologyAssignment.slices[0].podCounts"},
		"unknown kind":    {`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor"}`, "kueue.x-k8s.io/v1beta2", `kind: "ResourceFlavor" is not converted`},
		"unknown version": {`{"apiVersion":"kueue.x-k8s.io/v1alpha1","kind":"Cohort"}`, "kueue.x-k8s.io/v1beta2", `apiVersion: cannot convert "kueue.x-k8s.io/v1alpha1"`},
		"not json":        {`[1,2`, "kueue.x-k8s.io/v1beta2", "not a JSON object"},
		"wrong type":      {`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Cohort","metadata":{"name":"c"},"spec":{"parentName":7}}`, "kueue.x-k8s.io/v1beta2", "Cohort c:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Convert([]byte(tc.raw), tc.version)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Every converted kind has its converters and its CRD.
func TestConvertedKinds(t *testing.T) {
	for plural, kind := range Kinds {
		if c, ok := converters[kind]; !ok || c.up == nil || c.down == nil {
			t.Errorf("kind %s (%s) has no converters", kind, plural)
		}
	}
	want := []string{"clusterqueues.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io",
		"multikueueclusters.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"}
	if got := CRDNames(); !slices.Equal(got, want) {
		t.Errorf("CRDNames() = %v, want %v", got, want)
	}
}

func TestHandlerServesConversionReviews(t *testing.T) {
	srv := httptest.NewServer(Handler{})
	defer srv.Close()
	post := func(review *apiextensionsv1.ConversionReview) *apiextensionsv1.ConversionReview {
		t.Helper()
		body, _ := json.Marshal(review)
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		out := &apiextensionsv1.ConversionReview{}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	cohort := `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Cohort","metadata":{"name":"c"},"spec":{"parentName":"root"}}`
	got := post(&apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: "u1", DesiredAPIVersion: "kueue.x-k8s.io/v1beta1",
			Objects: []runtime.RawExtension{{Raw: []byte(cohort)}}}})
	if got.Response == nil || got.Response.UID != "u1" || got.Response.Result.Status != metav1.StatusSuccess || len(got.Response.ConvertedObjects) != 1 {
		t.Fatalf("response = %+v, want one converted object for u1", got.Response)
	}
	if s := string(got.Response.ConvertedObjects[0].Raw); !strings.Contains(s, `"apiVersion":"kueue.x-k8s.io/v1beta1"`) || !strings.Contains(s, `"parentName":"root"`) {
		t.Errorf("converted = %s, want a v1beta1 Cohort with its parent", s)
	}
	got = post(&apiextensionsv1.ConversionReview{Request: &apiextensionsv1.ConversionRequest{UID: "u2", DesiredAPIVersion: "kueue.x-k8s.io/v1beta1",
		Objects: []runtime.RawExtension{{Raw: []byte(cohort)}, {Raw: []byte(`{"apiVersion":"v1","kind":"Pod"}`)}}}})
	if got.Response.Result.Status != metav1.StatusFailure || len(got.Response.ConvertedObjects) != 0 || !strings.Contains(got.Response.Result.Message, "objects[1]") {
		t.Errorf("response = %+v, want a failure naming objects[1] and no object", got.Response)
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"request":`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a broken review got status %d, want 400", resp.StatusCode)
	}
}

// FuzzConvert: any input gives an error or JSON of the desired version,
// never a panic.
func FuzzConvert(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","status":{"admission":{"podSetAssignments":[{"topologyAssignment":{"levels":["a"],"domains":[{"values":["x"],"count":1}]}}]}}}`), true)
	f.Add([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","status":{"admission":{"podSetAssignments":[{"topologyAssignment":{"levels":["a"],"slices":[{"domainCount":1,"valuesPerLevel":[{"individual":{"roots":[]}}],"podCounts":{}}]}}]}}}`), false)
	f.Add([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","spec":{"admissionChecks":["a","a"]}}`), true)
	f.Add([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"MultiKueueCluster","spec":{"clusterSource":{}}}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, toV1beta2 bool) {
		want := "kueue.x-k8s.io/v1beta1"
		if toV1beta2 {
			want = "kueue.x-k8s.io/v1beta2"
		}
		out, err := Convert(raw, want)
		if err != nil {
			return
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(out, &tm); err != nil {
			t.Fatalf("output is not JSON: %v", err)
		}
		if tm.APIVersion != want {
			t.Fatalf("output apiVersion %q, want %q", tm.APIVersion, want)
		}
	})
}
