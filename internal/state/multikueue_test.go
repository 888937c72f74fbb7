package state

import (
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A ClusterQueue with a MultiKueue check defers topology placement; one
// with two MultiKueue checks, one limited to some flavors, or one with a
// ProvisioningRequest check as well is inactive, saying which.
func TestMultiKueueChecks(t *testing.T) {
	st := New()
	st.SetFlavor(&Flavor{Name: "f"})
	st.SetAdmissionCheck("mk", true, kueue.MultiKueueControllerName)
	st.SetAdmissionCheck("mk2", true, kueue.MultiKueueControllerName)
	st.SetAdmissionCheck("prov", true, kueue.ProvisioningRequestControllerName)
	st.SetAdmissionCheck("other", true, "example.com/check")
	for _, tc := range []struct {
		name   string
		rules  []AdmissionCheckRule
		reason string
		defers bool
	}{
		{"plain", []AdmissionCheckRule{{Name: "other"}}, "", false},
		{"dispatching", []AdmissionCheckRule{{Name: "mk"}, {Name: "other"}}, "", true},
		{"two", []AdmissionCheckRule{{Name: "mk"}, {Name: "mk2"}}, InactiveMultipleMultiKueue, true},
		{"per-flavor", []AdmissionCheckRule{{Name: "mk", OnFlavors: []kueue.ResourceFlavorReference{"f"}}}, InactiveMultiKueuePerFlavor, true},
		{"with-provisioning", []AdmissionCheckRule{{Name: "mk"}, {Name: "prov"}}, InactiveMultiKueueProvisioning, true},
	} {
		cq := testQueue(tc.name, "")
		cq.AdmissionChecks = tc.rules
		st.SetClusterQueue(cq)
		snap := st.Snapshot()
		in, inactive := snap.ClusterQueueInactive(cq.Name)
		if got := map[bool]string{true: in.Reason}[inactive]; got != tc.reason {
			t.Errorf("%s: inactive reason %q (%s), want %q", tc.name, got, in.Message, tc.reason)
		}
		if got := snap.DefersTopology(cq); got != tc.defers {
			t.Errorf("%s: defers topology %v, want %v", tc.name, got, tc.defers)
		}
	}
	st.DeleteAdmissionCheck("mk")
	cq := testQueue("dispatching", "")
	cq.AdmissionChecks = []AdmissionCheckRule{{Name: "mk"}}
	if st.Snapshot().DefersTopology(cq) {
		t.Errorf("a deleted MultiKueue check still defers topology")
	}
}
