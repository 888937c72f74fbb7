package plugin

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func stopPolicyOf(t *testing.T, obj client.Object) kueue.StopPolicy {
	t.Helper()
	get(t, client.ObjectKeyFromObject(obj), obj)
	var p *kueue.StopPolicy
	switch o := obj.(type) {
	case *kueue.ClusterQueue:
		p = o.Spec.StopPolicy
	case *kueue.LocalQueue:
		p = o.Spec.StopPolicy
	}
	if p == nil {
		return ""
	}
	return *p
}

func TestStopAndResumeQueues(t *testing.T) {
	ns := namespace(t, "stop-queues")
	cq := &kueue.ClusterQueue{ObjectMeta: metav1Name("stop-cq")}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stop-lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "stop-cq"}}
	create(t, cq, lq)
	tr := newTranscript(t)
	steps := []struct {
		args []string
		obj  client.Object
		want kueue.StopPolicy
	}{
		{[]string{"stop", "clusterqueue", "stop-cq"}, cq, kueue.HoldAndDrain},
		{[]string{"resume", "clusterqueue", "stop-cq"}, cq, kueue.None},
		{[]string{"stop", "cq", "stop-cq", "--keep-already-running"}, cq, kueue.Hold},
		{[]string{"resume", "cq", "stop-cq"}, cq, kueue.None},
		{[]string{"stop", "localqueue", "stop-lq", "-n", ns}, lq, kueue.HoldAndDrain},
		{[]string{"resume", "lq", "stop-lq", "-n", ns}, lq, kueue.None},
		{[]string{"stop", "lq", "stop-lq", "-n", ns, "--keep-already-running"}, lq, kueue.Hold},
	}
	for _, s := range steps {
		tr.ok(s.args...)
		if got := stopPolicyOf(t, s.obj); got != s.want {
			t.Errorf("after %v: stopPolicy %q, want %q", s.args, got, s.want)
		}
	}
	tr.fails("stop", "cq", "no-such-cq")
	tr.fails("resume", "lq", "stop-lq") // not in the default namespace
	tr.check()
}

func TestStopAndResumeWorkload(t *testing.T) {
	ns := namespace(t, "stop-workload")
	wl := newWorkload(ns, "wl", "lq", nil, nil)
	create(t, wl)
	active := func() string {
		get(t, client.ObjectKeyFromObject(wl), wl)
		if wl.Spec.Active == nil {
			return "unset"
		}
		if *wl.Spec.Active {
			return "true"
		}
		return "false"
	}
	tr := newTranscript(t)
	tr.ok("stop", "workload", "wl", "-n", ns, "--dry-run", "server")
	if a := active(); a == "false" {
		t.Errorf("a server dry run deactivated the workload")
	}
	tr.ok("stop", "workload", "wl", "-n", ns)
	if a := active(); a != "false" {
		t.Errorf("after stop, spec.active = %s, want false", a)
	}
	tr.ok("resume", "wl", "wl", "-n", ns)
	if a := active(); a != "true" {
		t.Errorf("after resume, spec.active = %s, want true", a)
	}
	tr.fails("stop", "workload", "missing", "-n", ns)
	tr.check()
}
