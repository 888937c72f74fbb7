package plugin

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

var listLabel = map[string]string{"test": "list"}

// listFixture creates flavors, ClusterQueues, LocalQueues and Workloads in
// namespaces list-a and list-b, with statuses as a manager writes them.
func listFixture(t *testing.T) {
	t.Helper()
	a, b := namespace(t, "list-a"), namespace(t, "list-b")
	create(t,
		&kueue.ResourceFlavor{ObjectMeta: labelled("list-rf-1", listLabel), Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"zone": "a", "pool": "gpu"}}},
		&kueue.ResourceFlavor{ObjectMeta: labelled("list-rf-2", listLabel)},
		&kueue.ClusterQueue{ObjectMeta: labelled("list-cq-1", listLabel), Spec: kueue.ClusterQueueSpec{CohortName: "team", NamespaceSelector: &metav1.LabelSelector{}}},
		&kueue.ClusterQueue{ObjectMeta: labelled("list-cq-2", listLabel)},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "lq-1"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "list-cq-1"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: b, Name: "lq-2"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "list-cq-2"}},
	)
	now := time.Now()
	var cq1, cq2 kueue.ClusterQueue
	get(t, client.ObjectKey{Name: "list-cq-1"}, &cq1)
	cq1.Status.PendingWorkloads, cq1.Status.AdmittedWorkloads = 1, 2
	cq1.Status.Conditions = []metav1.Condition{condition(kueue.ClusterQueueActive, now)}
	updateStatus(t, &cq1)
	get(t, client.ObjectKey{Name: "list-cq-2"}, &cq2)
	cq2.Status.PendingWorkloads = 1
	cq2.Status.Conditions = []metav1.Condition{{Type: kueue.ClusterQueueActive, Status: metav1.ConditionFalse,
		Reason: "FlavorNotFound", Message: "no flavor", LastTransitionTime: metav1.NewTime(now)}}
	updateStatus(t, &cq2)
	var lq1 kueue.LocalQueue
	get(t, client.ObjectKey{Namespace: a, Name: "lq-1"}, &lq1)
	lq1.Status.PendingWorkloads, lq1.Status.AdmittedWorkloads = 1, 2
	updateStatus(t, &lq1)

	job := newJob(a, "job-1")
	create(t, job)
	pending := newWorkload(a, "wl-pending", "lq-1", job, listLabel)
	admitted := newWorkload(a, "wl-admitted", "lq-1", nil, listLabel)
	finished := newWorkload(a, "wl-finished", "lq-1", nil, listLabel)
	reserved := newWorkload(b, "wl-reserved", "lq-2", nil, listLabel)
	create(t, pending, admitted, finished, reserved)
	admit(t, admitted, "list-cq-1", condition(kueue.WorkloadQuotaReserved, now), condition(kueue.WorkloadAdmitted, now))
	admit(t, finished, "list-cq-1", condition(kueue.WorkloadQuotaReserved, now), condition(kueue.WorkloadAdmitted, now),
		condition(kueue.WorkloadFinished, now.Add(90*time.Second)))
	admit(t, reserved, "list-cq-2", condition(kueue.WorkloadQuotaReserved, now))
}

func TestList(t *testing.T) {
	listFixture(t)
	tr := newTranscript(t)
	tr.ok("list", "clusterqueue", "-l", "test=list")
	tr.ok("list", "cq", "-l", "test=list", "--active=false")
	tr.ok("list", "cq", "--field-selector", "metadata.name=list-cq-1")
	tr.fails("list", "cq", "--active=true", "--active=false")
	tr.ok("list", "localqueue", "-n", "list-a")
	tr.ok("list", "lq", "-A", "-c", "list-cq-2")
	tr.ok("list", "lq", "-n", "default")
	tr.ok("list", "resourceflavor", "-l", "test=list")
	tr.ok("list", "workload", "-n", "list-a")
	tr.ok("list", "workload", "-A", "-l", "test=list")
	tr.ok("list", "wl", "-A", "-l", "test=list", "--status", "pending", "--status", "quotareserved")
	tr.ok("list", "wl", "-n", "list-a", "--status", "finished")
	tr.ok("list", "wl", "-n", "list-a", "-q", "lq-1", "-c", "list-cq-1")
	tr.ok("list", "kueueworkload", "-n", "list-a", "--for", "job/job-1")
	tr.ok("list", "wl", "-n", "list-a", "--for", "jobs.batch/no-such-job")
	tr.ok("list", "wl", "-n", "list-a", "-o", "name")
	if err := tr.fails("list", "wl", "--status", "running"); !strings.Contains(err.Error(), "--status") {
		t.Errorf("error %q does not name --status", err)
	}
	if err := tr.fails("list", "wl", "-l", "a=(b"); !strings.Contains(err.Error(), "--selector") {
		t.Errorf("error %q does not name --selector", err)
	}
	tr.fails("list", "wl", "--for", "job")
	tr.check()
}

func TestListPods(t *testing.T) {
	ns := namespace(t, "list-pods")
	job := newJob(ns, "pj")
	job.Spec.Suspend = nil
	create(t, job)
	uid := string(job.UID)
	create(t,
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pj-0", Labels: map[string]string{batchv1.ControllerUidLabel: uid, "role": "a"}}, Spec: podSpec()},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pj-1", Labels: map[string]string{batchv1.ControllerUidLabel: uid, "role": "b"}}, Spec: podSpec()},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unrelated"}, Spec: podSpec()},
		// A pod made from the job's admitted template through a child
		// object: found by Kuota's job-uid label.
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pj-child", Labels: map[string]string{jobframework.PodJobUIDLabel: uid, "role": "b"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "child", UID: "child-uid", Controller: ptr.To(true)}}},
			Spec: podSpec()},
	)
	var pod corev1.Pod
	get(t, client.ObjectKey{Namespace: ns, Name: "pj-1"}, &pod)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Ready: true, RestartCount: 2, Image: "busybox",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if err := env.Client.Status().Update(context.Background(), &pod); err != nil {
		t.Fatal(err)
	}
	tr := newTranscript(t)
	tr.ok("list", "pods", "-n", ns, "--for", "job/pj")
	tr.ok("list", "pods", "-n", ns, "--for", "job.batch/pj", "-l", "role=b")
	tr.ok("list", "pods", "-A", "--for", "job/pj")
	tr.ok("list", "pods", "-n", ns, "--for", "job/none")
	tr.fails("list", "pods", "-n", ns)
	tr.fails("list", "pods", "-n", ns, "--for", "nosuchkind/x")
	tr.check()
}
