package jobset

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func replicatedJob(name string, replicas int32, parallelism, completions *int32, cpu string) jobsetapi.ReplicatedJob {
	return jobsetapi.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: parallelism, Completions: completions,
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{
				NodeSelector:  map[string]string{"team": "a"},
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			}},
	}}}
}

// newJobSet is a queued, suspended JobSet with a driver (1 pod) and
// workers (2 Jobs of 3 pods).
func newJobSet() *jobsetapi.JobSet {
	return &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: "js", Namespace: "ns", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: jobsetapi.JobSetSpec{Suspend: ptr.To(true), ReplicatedJobs: []jobsetapi.ReplicatedJob{
			replicatedJob("driver", 1, nil, nil, "1"),
			replicatedJob("workers", 2, ptr.To[int32](3), ptr.To[int32](6), "2"),
		}},
	}
}

func TestPodSetsOnePerReplicatedJob(t *testing.T) {
	js := newJobSet()
	js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, replicatedJob("few-completions", 4, ptr.To[int32](5), ptr.To[int32](2), "1"))
	ps, err := New(js).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  kueue.PodSetReference
		count int32
		cpu   string
	}{{"driver", 1, "1"}, {"workers", 6, "2"}, {"few-completions", 8, "1"}}
	if len(ps) != len(want) {
		t.Fatalf("%d PodSets, want %d", len(ps), len(want))
	}
	for i, w := range want {
		got := ps[i]
		if got.Name != w.name || got.Count != w.count || got.MinCount != nil {
			t.Errorf("PodSet %d: %s of %d (min %v), want %s of %d without partial admission", i, got.Name, got.Count, got.MinCount, w.name, w.count)
		}
		if q := got.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.String() != w.cpu {
			t.Errorf("PodSet %s asks for %s cpu per pod, want %s", got.Name, q.String(), w.cpu)
		}
	}
	if _, err := New(&jobsetapi.JobSet{}).PodSets(); err == nil || !strings.Contains(err.Error(), "spec.replicatedJobs") {
		t.Errorf("a JobSet without replicated jobs: error %v, want one naming spec.replicatedJobs", err)
	}
}

func admission(wl *kueue.Workload) []jobframework.PodSetInfo {
	var out []jobframework.PodSetInfo
	for _, ps := range wl.Spec.PodSets {
		out = append(out, jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count,
			NodeSelector: map[string]string{"pool": "gpu"},
			Tolerations:  []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Labels:       map[string]string{jobframework.PodSetLabel: string(ps.Name)},
			Annotations:  map[string]string{jobframework.WorkloadAnnotation: "wl"}})
	}
	return out
}

func TestRunInjectsEachTemplateAndRestoreUndoesIt(t *testing.T) {
	js := newJobSet()
	job := New(js)
	ps, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}}
	// The admission lists the PodSets in another order: they are matched by name.
	infos := admission(wl)
	infos[0], infos[1] = infos[1], infos[0]
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	if job.IsSuspended() {
		t.Fatal("an admitted JobSet must be resumed")
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		tpl := rj.Template.Spec.Template
		if tpl.Spec.NodeSelector["pool"] != "gpu" || tpl.Spec.NodeSelector["team"] != "a" || len(tpl.Spec.Tolerations) != 1 ||
			tpl.Labels[jobframework.PodSetLabel] != rj.Name || tpl.Labels["app"] != rj.Name || tpl.Annotations[jobframework.WorkloadAnnotation] != "wl" {
			t.Fatalf("replicated job %s after start: %+v", rj.Name, tpl)
		}
	}

	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring a started JobSet must change it")
	}
	for i, rj := range js.Spec.ReplicatedJobs {
		want := newJobSet().Spec.ReplicatedJobs[i].Template.Spec.Template
		tpl := rj.Template.Spec.Template
		if len(tpl.Spec.NodeSelector) != 1 || tpl.Spec.NodeSelector["team"] != "a" || len(tpl.Spec.Tolerations) != 0 ||
			len(tpl.Labels) != len(want.Labels) || len(tpl.Annotations) != 0 {
			t.Fatalf("replicated job %s after restore: %+v", rj.Name, tpl)
		}
	}
	if job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring twice must change nothing")
	}
}

func TestRunRefusesAnAdmissionThatDoesNotMatch(t *testing.T) {
	job := New(newJobSet())
	ps, _ := job.PodSets()
	infos := admission(&kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}})
	if err := job.RunWithPodSetsInfo(infos[:1]); err == nil {
		t.Error("an admission missing a replicated job must be an error")
	}
	infos[1].Name = "other"
	if err := job.RunWithPodSetsInfo(infos); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("an admission for an unknown PodSet: error %v", err)
	}
	infos = admission(&kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}})
	infos[1].NodeSelector = map[string]string{"team": "b"}
	if err := job.RunWithPodSetsInfo(infos); err == nil || !strings.Contains(err.Error(), "workers") {
		t.Errorf("a flavor label contradicting the template: error %v, want one naming the replicated job", err)
	}
	if !job.IsSuspended() {
		t.Error("a JobSet that cannot take its admission must stay suspended")
	}
}

func TestFinishedActiveReadyAndReclaimable(t *testing.T) {
	js := newJobSet()
	js.Spec.Suspend = ptr.To(false)
	job := New(js).(*JobSet)
	if _, _, done := job.Finished(); done {
		t.Fatal("a new JobSet is not finished")
	}
	if job.IsActive() || job.PodsReady() {
		t.Fatal("a JobSet without status has no active and no ready pods")
	}
	js.Status.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "driver", Active: 1, Ready: 1}, {Name: "workers", Active: 2, Ready: 1}}
	if !job.IsActive() || job.PodsReady() {
		t.Fatal("1 of 2 worker Jobs ready: active, not ready")
	}
	if rp := job.ReclaimablePods(); rp != nil {
		t.Fatalf("nothing succeeded yet: %+v", rp)
	}
	js.Status.ReplicatedJobsStatus[1] = jobsetapi.ReplicatedJobStatus{Name: "workers", Active: 1, Ready: 1, Succeeded: 1}
	if !job.PodsReady() {
		t.Fatal("every Job ready or succeeded: ready")
	}
	if rp := job.ReclaimablePods(); len(rp) != 1 || rp[0].Name != "workers" || rp[0].Count != 3 {
		t.Fatalf("one worker Job of 3 pods succeeded: want 3 reclaimable worker pods, got %+v", rp)
	}
	js.Status.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "driver"}, {Name: "workers"}}
	if job.IsActive() {
		t.Fatal("no active Job: not active")
	}
	js.Status.Conditions = []metav1.Condition{{Type: string(jobsetapi.JobSetFailed), Status: metav1.ConditionTrue, Message: "job workers-0 failed"}}
	if msg, ok, done := job.Finished(); !done || ok || msg != "job workers-0 failed" {
		t.Fatalf("failed JobSet: %q %v %v", msg, ok, done)
	}
	js.Status.Conditions = []metav1.Condition{{Type: string(jobsetapi.JobSetCompleted), Status: metav1.ConditionTrue}}
	if msg, ok, done := job.Finished(); !done || !ok || msg == "" {
		t.Fatalf("completed JobSet: %q %v %v", msg, ok, done)
	}
}

func TestPodSelectorUsesTheJobSetUID(t *testing.T) {
	sel := New(nil).(jobframework.JobWithPodSelector).PodSelector("abc")
	if got := sel.String(); got != jobsetapi.JobSetUIDKey+"=abc" {
		t.Fatalf("selector %q", got)
	}
}
