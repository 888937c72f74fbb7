package state

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
)

var cpu = resources.FlavorResource{Flavor: "f", Resource: corev1.ResourceCPU}

func testQueue(name string, cohort kueue.CohortReference) *ClusterQueue {
	return &ClusterQueue{Name: kueue.ClusterQueueReference(name), Cohort: cohort, StopPolicy: kueue.None,
		QueueingStrategy: kueue.BestEffortFIFO, NamespaceSelector: labels.Everything(), FairWeight: resources.One,
		ResourceGroups: []ResourceGroup{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, Flavors: []kueue.ResourceFlavorReference{"f"}}},
		Quotas:         hierarchy.Quotas{cpu: hierarchy.NominalOnly(10000)}}
}

func admitted(name string, cq kueue.ClusterQueueReference, milli int64) *Admitted {
	return &Admitted{Key: types.NamespacedName{Namespace: "ns", Name: name}, UID: types.UID(name), ClusterQueue: cq,
		Usage: resources.FlavorResourceQuantities{cpu: milli}}
}

// render describes what a snapshot shows.
func render(s *Snapshot) string {
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(kueue.ClusterQueueReference) bool) {
		for n := range s.ClusterQueues {
			if !yield(n) {
				return
			}
		}
	}) {
		in, inactive := s.ClusterQueueInactive(name)
		fmt.Fprintf(&b, "%s inactive=%v %s usage=%d avail=%d:", name, inactive, in.Reason,
			s.Tree.ClusterQueue(name).Usage(cpu), s.Tree.ClusterQueue(name).Available(cpu))
		for _, a := range s.AdmittedIn(name) {
			fmt.Fprintf(&b, " %s(evicting=%v)", a.Key.Name, a.Evicting)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "flavors=%d namespaces=%d admitted=%d", len(s.Flavors), len(s.Namespaces), s.AdmittedCount())
	s.EachAdmitted(func(a *Admitted) bool {
		fmt.Fprintf(&b, " %s/%s", a.ClusterQueue, a.Key.Name)
		return true
	})
	return b.String()
}

// A snapshot shares what did not change with the state; nothing done to
// the state afterwards shows in it.
func TestSnapshotIsNotChangedByLaterEvents(t *testing.T) {
	st := New()
	st.SetFlavor(&Flavor{Name: "f"})
	st.SetNamespace("ns", nil)
	st.SetClusterQueue(testQueue("a", "co"))
	st.SetClusterQueue(testQueue("b", "co"))
	st.SetClusterQueue(testQueue("c", ""))
	for i, cq := range []kueue.ClusterQueueReference{"a", "a", "b", "c"} {
		if err := st.Assume(admitted(fmt.Sprintf("w%d", 9-i), cq, 2000)); err != nil {
			t.Fatal(err)
		}
	}
	first := st.Snapshot()
	want := render(first)
	if !strings.Contains(want, "a inactive=false  usage=4000 avail=14000: w8(evicting=false) w9(evicting=false)") {
		t.Fatalf("first snapshot:\n%s", want)
	}

	// Every kind of change, and many queues changing, so that the
	// admitted lists are folded into a new base too.
	for i := range 40 {
		name := kueue.ClusterQueueReference(fmt.Sprintf("q%02d", i))
		st.SetClusterQueue(testQueue(string(name), "other"))
		if err := st.Assume(admitted(fmt.Sprintf("x%d", i), name, 1000)); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			_ = st.Snapshot()
		}
	}
	st.Forget(types.NamespacedName{Namespace: "ns", Name: "w9"})
	evicting := *admitted("w8", "a", 2000)
	evicting.Evicting = true
	if err := st.Replace(&evicting); err != nil {
		t.Fatal(err)
	}
	stopped := testQueue("b", "co")
	stopped.StopPolicy = kueue.Hold
	st.SetClusterQueue(stopped)
	st.DeleteClusterQueue("c")
	st.SetNamespace("other", nil)
	st.SetFlavor(&Flavor{Name: "g"})
	if got := render(first); got != want {
		t.Fatalf("the first snapshot changed:\nthen:\n%s\nnow:\n%s", want, got)
	}

	second := st.Snapshot()
	got := render(second)
	for _, line := range []string{
		"a inactive=false  usage=2000 avail=16000: w8(evicting=true)",
		"b inactive=true Stopped usage=2000",
		"c inactive=true Terminating usage=2000",
		"q07 inactive=false  usage=1000",
		"flavors=2 namespaces=2 admitted=43",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("second snapshot lacks %q:\n%s", line, got)
		}
	}
	if in, ok := st.ClusterQueueInactive("b"); !ok || in.Reason != InactiveStopped {
		t.Errorf("state: b inactive = %v %v", in, ok)
	}
	if got := render(first); got != want {
		t.Fatalf("the first snapshot changed:\nthen:\n%s\nnow:\n%s", want, got)
	}
}
