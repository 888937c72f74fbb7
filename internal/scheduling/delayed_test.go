package scheduling

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
)

// provisionedCluster is tasCluster with "cq" using a ProvisioningRequest
// check ("prov") on flavor "tas".
func provisionedCluster(t *testing.T) *state.State {
	t.Helper()
	st := tasCluster(t, "tas")
	st.SetAdmissionCheck("prov", true, kueue.ProvisioningRequestControllerName)
	cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector:       &metav1.LabelSelector{},
		AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "prov"}}},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "tas", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")}}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st.SetClusterQueue(cq)
	return st
}

// With a ProvisioningRequest check on its TAS flavor, a workload reserves
// quota though the nodes are full (they are to be provisioned): its PodSet
// is marked delayedTopologyRequest Pending, without an assignment. The
// second pass (PlaceDelayed) places it once there is room, narrowed by the
// check's podSetUpdates, and says why while there is none.
func TestDelayedTopologyWaitsForProvisioning(t *testing.T) {
	st := provisionedCluster(t)
	rackA := holding(t, st, "rack-a", 0, 1, map[string]int32{"a1": 4, "a2": 4})
	rackB := holding(t, st, "rack-b", 0, 2, map[string]int32{"b1": 4, "b2": 4})
	w := tasWorkload("w", 8, &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}, 10)
	d := decideOne(t, st, w)["w"]
	if !d.Admit {
		t.Fatalf("want the quota reserved before the nodes exist, got %s: %s", d.Reason, d.Explain())
	}
	adm := AdmissionOf("cq", d.Assignment)
	psa := adm.PodSetAssignments[0]
	if psa.TopologyAssignment != nil || ptr.Deref(psa.DelayedTopologyRequest, "") != kueue.DelayedTopologyRequestStatePending {
		t.Fatalf("want a delayed topology request and no assignment, got %+v", psa)
	}

	if got, why := PlaceDelayed(st.Snapshot(), w, adm, nil); got != nil || !strings.Contains(why, "fits 0") {
		t.Fatalf("no rack has room: want no placement and why, got %+v %q", got, why)
	}
	st.Forget(rackA.Key)
	st.Forget(rackB.Key)
	updates := []kueue.PodSetUpdate{{Name: "main", NodeSelector: map[string]string{testRack: "b"}}}
	got, why := PlaceDelayed(st.Snapshot(), w, adm, updates)
	if got == nil {
		t.Fatalf("both racks are free: %s", why)
	}
	psa = got.PodSetAssignments[0]
	if ptr.Deref(psa.DelayedTopologyRequest, "") != kueue.DelayedTopologyRequestStateReady {
		t.Fatalf("want the request Ready, got %v", psa.DelayedTopologyRequest)
	}
	doms, err := tas.Domains(psa.TopologyAssignment)
	if err != nil {
		t.Fatal(err)
	}
	for _, dom := range doms {
		if host := dom.Values[len(dom.Values)-1]; !strings.HasPrefix(host, "b") {
			t.Fatalf("the check's node selector asks for rack b, got %v", doms)
		}
	}
	if adm.PodSetAssignments[0].TopologyAssignment != nil {
		t.Fatal("PlaceDelayed changed its input")
	}
}
