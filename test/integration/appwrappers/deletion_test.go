package appwrappers

import (
	"encoding/json"
	"maps"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The AppWrapper controller creates the wrapped batch Job, which it owns,
// with the component's podSetInfo merged into the Job's pod template; the
// Job controls the pods. Garbage collection deletes the Job with the
// AppWrapper while a pod still terminates. The pod carries the labels of
// the merged template, the AppWrapper's UID among them: the deleted
// AppWrapper's Workload keeps its finalizer, and its quota, until the pod
// is gone, also when the manager restarts in the middle of the deletion.
func TestDeletedAppWrapperHoldsQuotaWhileComponentPodTerminates(t *testing.T) {
	framework.EachManager(t, func(t *testing.T, restart bool) {
		f := start(t)
		ns, cq, fl := f.queues("4")
		f.create(f.newAppWrapper(ns, "gone", "lq", 1, 1))
		f.waitRunning(ns, "gone", fl)
		f.setStatus(ns, "gone", quotaReserved(true))
		aw := f.get(ns, "gone")
		var wl *kueue.Workload
		f.eventually("the AppWrapper's Workload exists", func() (err error) {
			wl, err = f.workloadOf(aw)
			return err
		})
		comp := aw.Spec.Components[0]
		info := comp.PodSetInfos[0]
		if got := info.Labels[jobframework.PodJobUIDLabel]; got != string(aw.UID) {
			t.Fatalf("component 0 podSetInfo label %s=%q, want the AppWrapper's UID %s", jobframework.PodJobUIDLabel, got, aw.UID)
		}
		// The wrapped Job as the AppWrapper controller creates it: its
		// template with the podSetInfo merged. It exists when its pod
		// is created, so the pod webhook sees the pod belongs to the
		// AppWrapper; garbage collection, which would delete it with
		// the AppWrapper, does not run here.
		var job batchv1.Job
		if err := json.Unmarshal(comp.Template.Raw, &job); err != nil {
			t.Fatal(err)
		}
		tpl := &job.Spec.Template
		maps.Copy(tpl.Labels, info.Labels)
		if tpl.Annotations == nil {
			tpl.Annotations = map[string]string{}
		}
		maps.Copy(tpl.Annotations, info.Annotations)
		maps.Copy(tpl.Spec.NodeSelector, info.NodeSelector)
		tpl.Spec.Tolerations = append(tpl.Spec.Tolerations, info.Tolerations...)
		tpl.Spec.SchedulingGates = append(tpl.Spec.SchedulingGates, info.SchedulingGates...)
		ownedBy(&job, aw)
		f.create(&job)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name + "-m3n9c", Finalizers: []string{framework.HoldFinalizer},
				Labels: maps.Clone(job.Spec.Template.Labels), Annotations: maps.Clone(job.Spec.Template.Annotations),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name,
					UID: job.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *job.Spec.Template.Spec.DeepCopy(),
		}
		f.create(pod)
		if ptr.Deref(job.Spec.Suspend, false) || pod.Labels[jobframework.ManagedLabel] != "" || len(pod.Spec.SchedulingGates) != 0 {
			t.Fatalf("the wrapped Job or its pod was queued on its own: suspend %v, pod labels %v gates %v",
				job.Spec.Suspend, pod.Labels, pod.Spec.SchedulingGates)
		}
		d := framework.Deletion{Client: f.c, ClusterQueue: cq, Job: aw, Workload: wl, Pod: pod}
		if restart {
			d.Restart = framework.Restartable(t, f.m)
		}
		d.Check(t)
	})
}
