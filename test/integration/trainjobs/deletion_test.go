package trainjobs

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The trainer runs a TrainJob as a JobSet it owns; the JobSet's batch Jobs
// control the pods. Garbage collection deletes the JobSet and its Jobs
// with the TrainJob while a pod still terminates. The pod carries the
// labels Kuota's runtime patch gives the replicated job's pods, the
// TrainJob's UID among them: the deleted TrainJob's Workload keeps its
// finalizer, and its quota, until the pod is gone, also when the manager
// restarts in the middle of the deletion.
func TestDeletedTrainJobHoldsQuotaWhileJobSetPodsTerminate(t *testing.T) {
	framework.EachManager(t, func(t *testing.T, restart bool) {
		ns, fl := queues(t, "4")
		restartManager := framework.Restartable(t, startManager(t))
		runtimeName := ns + "-torch"
		create(t, runtimeObject("", runtimeName))
		create(t, newTrainJob(ns, "gone", map[string]any{"name": runtimeName}, 1, nil))
		u := waitRunning(t, ns, "gone", fl)
		setStatus(t, ns, "gone", jobsStatus(1, 1, 0))
		u = getTrainJob(t, ns, "gone")
		wl := workloadOf(t, u)
		if wl == nil || len(wl.Spec.PodSets) != 1 {
			t.Fatalf("Workload %+v, want one with PodSet node", wl)
		}
		patched := patchedPodTemplate(t, u, "node")
		if got := patched.Labels[jobframework.PodJobUIDLabel]; got != string(u.GetUID()) {
			t.Fatalf("Kuota's patch labels the pods %s=%q, want the TrainJob's UID %s", jobframework.PodJobUIDLabel, got, u.GetUID())
		}
		const jobUID = "3c8f2e6a-9b17-4d40-a5e2-6f0d1b7c8e94"
		labels := maps.Clone(patched.Labels)
		labels["jobset.sigs.k8s.io/jobset-name"] = "gone"
		labels["jobset.sigs.k8s.io/replicatedjob-name"] = "node"
		labels["batch.kubernetes.io/job-name"] = "gone-node-0"
		labels["batch.kubernetes.io/controller-uid"] = jobUID
		spec := *wl.Spec.PodSets[0].Template.Spec.DeepCopy()
		spec.NodeSelector = patched.Spec.NodeSelector
		spec.Tolerations = patched.Spec.Tolerations
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone-node-0-0-q4w8z", Finalizers: []string{framework.HoldFinalizer},
				Labels: labels, Annotations: patched.Annotations,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "gone-node-0",
					UID: jobUID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: spec,
		}
		create(t, pod)
		d := framework.Deletion{Client: env.Client, ClusterQueue: framework.ClusterQueueName(ns), Job: u, Workload: wl, Pod: pod}
		if restart {
			d.Restart = restartManager
		}
		d.Check(t)
	})
}

// patchedPodTemplate is the pod template override of the replicated job
// in Kuota's runtime patch of the TrainJob.
func patchedPodTemplate(t *testing.T, u *unstructured.Unstructured, job string) corev1.PodTemplateSpec {
	t.Helper()
	rjs, _, _ := unstructured.NestedSlice(kuotaPatch(u), "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	for _, rj := range rjs {
		m, _ := rj.(map[string]any)
		if m["name"] != job {
			continue
		}
		raw, _, _ := unstructured.NestedMap(m, "template", "spec", "template")
		var out corev1.PodTemplateSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("Kuota's patch has no replicated job %s: %v", job, kuotaPatch(u))
	return corev1.PodTemplateSpec{}
}
