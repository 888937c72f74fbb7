package plugin

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestPassThrough(t *testing.T) {
	if kubectlBinary() == "" {
		t.Skip("no kubectl in .cache/bin: run 'make tools' to test the pass-through commands")
	}
	ns := namespace(t, "passthrough")
	create(t,
		&kueue.ClusterQueue{ObjectMeta: labelled("pt-cq", map[string]string{"test": "passthrough"}), Spec: kueue.ClusterQueueSpec{CohortName: "pt"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pt-lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "pt-cq"}},
		newWorkload(ns, "pt-wl", "pt-lq", nil, nil),
	)
	tr := newTranscript(t)
	tr.ok("get", "clusterqueue", "pt-cq", "-o", "jsonpath={.spec.cohortName}{\"\\n\"}")
	tr.ok("get", "lq", "-n", ns, "-o", "name")
	tr.ok("get", "wl", "pt-wl", "-n", ns, "-o", "jsonpath={.spec.queueName}{\"\\n\"}")
	tr.ok("patch", "cq", "pt-cq", "--type", "merge", "-p", `{"spec":{"stopPolicy":"Hold"}}`)
	var cq kueue.ClusterQueue
	get(t, client.ObjectKey{Name: "pt-cq"}, &cq)
	if cq.Spec.StopPolicy == nil || *cq.Spec.StopPolicy != kueue.Hold {
		t.Errorf("patch through kubectl did not set stopPolicy: %v", cq.Spec.StopPolicy)
	}
	// describe shows times and UIDs: checked, not kept in the golden file.
	out, _, err := kuota(t, "", "describe", "localqueue", "pt-lq", "-n", ns)
	if err != nil || !strings.Contains(out, "Cluster Queue:  pt-cq") {
		t.Errorf("describe failed (%v) or its output lacks the ClusterQueue:\n%s", err, out)
	}
	tr.ok("delete", "localqueue", "pt-lq", "-n", ns)
	if exists(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pt-lq"}}) {
		t.Error("delete localqueue through kubectl left the LocalQueue")
	}
	tr.fails("get", "cq", "no-such-cq")
	tr.check()
}
