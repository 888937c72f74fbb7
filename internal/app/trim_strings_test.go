package app

import (
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func sameString(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b)
}

// Two cached Workloads of one queue hold one copy of their namespace,
// queue and condition texts, and the copies read as decoded.
func TestCachedWorkloadsShareRepeatedStrings(t *testing.T) {
	for _, finished := range []bool{false, true} {
		tr := newTrimmer()
		data := benchWorkloadJSON(finished)
		a, _ := tr.workload(decodedWorkload(t, data))
		b, _ := tr.workload(decodedWorkload(t, data))
		wa, wb := a.(*kueue.Workload), b.(*kueue.Workload)
		want := decodedWorkload(t, data)
		if !sameString(wa.Namespace, wb.Namespace) || !sameString(string(wa.Spec.QueueName), string(wb.Spec.QueueName)) {
			t.Errorf("finished=%v: namespace or queue name not shared", finished)
		}
		for i, c := range wa.Status.Conditions {
			d := wb.Status.Conditions[i]
			if !sameString(c.Message, d.Message) || !sameString(c.Reason, d.Reason) || !sameString(c.Type, d.Type) {
				t.Errorf("finished=%v: condition %s not shared", finished, c.Type)
			}
			if w := meta.FindStatusCondition(want.Status.Conditions, c.Type); w == nil || c.Message != w.Message || c.Reason != w.Reason {
				t.Errorf("finished=%v: condition %+v, want %+v", finished, c, w)
			}
		}
		if wa.Name == "" || sameString(wa.Name, wb.Name) || sameString(string(wa.UID), string(wb.UID)) {
			t.Errorf("finished=%v: names and UIDs are each Workload's own", finished)
		}
	}
}
