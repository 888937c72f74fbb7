package plugin

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func exists(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestDeleteWorkload(t *testing.T) {
	ns := namespace(t, "delete-workload")
	job := newJob(ns, "owner-job")
	create(t, job)
	owned := newWorkload(ns, "owned", "lq", job, nil)
	lone := newWorkload(ns, "lone", "lq", nil, nil)
	create(t, owned, lone)
	tr := newTranscript(t)

	// Without --yes the command asks; "n" keeps everything.
	if _, err := tr.run("n\n", "delete", "workload", "owned", "-n", ns); err != nil {
		t.Fatal(err)
	}
	if !exists(t, job) {
		t.Fatal("answering n deleted the job")
	}
	tr.ok("delete", "workload", "owned", "-n", ns, "--dry-run", "server")
	if !exists(t, job) {
		t.Fatal("a server dry run deleted the job")
	}
	// The owning job goes; the garbage collector deletes the Workload.
	tr.ok("delete", "workload", "owned", "-n", ns, "--yes")
	if exists(t, job) {
		t.Error("delete workload --yes left the owning Job")
	}
	// A Workload without owner is deleted itself, without a question.
	tr.ok("delete", "kwl", "lone", "-n", ns)
	if exists(t, lone) {
		t.Error("delete workload left the Workload that has no owner")
	}
	tr.ok("delete", "workload", "missing", "-n", ns)
	tr.fails("delete", "workload", "-n", ns)
	tr.fails("delete", "workload", "a", "--all", "-n", ns)
	tr.check()
}

func TestDeleteAllWorkloads(t *testing.T) {
	ns := namespace(t, "delete-all")
	a, b := newWorkload(ns, "a", "lq", nil, nil), newWorkload(ns, "b", "lq", nil, nil)
	create(t, a, b)
	tr := newTranscript(t)
	tr.ok("delete", "workload", "--all", "-n", ns)
	tr.check()
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d Workloads left after delete workload --all", len(list.Items))
	}
}
