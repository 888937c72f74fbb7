package batchjob

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func newJob(parallelism, completions *int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", Annotations: map[string]string{}},
		Spec: batchv1.JobSpec{Parallelism: parallelism, Completions: completions, Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"team": "a"},
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			}}},
	}
}

func TestPodSetCountIsParallelismCappedByCompletions(t *testing.T) {
	cases := []struct {
		name                     string
		parallelism, completions *int32
		want                     int32
	}{
		{"defaults", nil, nil, 1},
		{"parallelism", ptr.To[int32](4), nil, 4},
		{"fewer completions", ptr.To[int32](4), ptr.To[int32](2), 2},
		{"more completions", ptr.To[int32](3), ptr.To[int32](10), 3},
	}
	for _, c := range cases {
		ps, err := New(newJob(c.parallelism, c.completions)).PodSets()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Name != kueue.DefaultPodSetName || ps[0].Count != c.want || ps[0].MinCount != nil {
			t.Errorf("%s: podsets %+v, want one %q of %d", c.name, ps, kueue.DefaultPodSetName, c.want)
		}
	}
}

func TestPartialAdmissionRunsSmallerAndRestores(t *testing.T) {
	j := newJob(ptr.To[int32](6), ptr.To[int32](6))
	j.Annotations[MinParallelismAnnotation] = "2"
	j.Annotations[CompletionsEqualParallelismAnnotation] = "true"
	job := New(j)
	ps, err := job.PodSets()
	if err != nil || ps[0].MinCount == nil || *ps[0].MinCount != 2 {
		t.Fatalf("podsets %+v (%v), want minCount 2", ps, err)
	}
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}}
	info := jobframework.PodSetInfo{Name: "main", Count: 3, NodeSelector: map[string]string{"gpu": "a100"},
		Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
		Labels:      map[string]string{jobframework.PodSetLabel: "main"}}
	if err := job.RunWithPodSetsInfo([]jobframework.PodSetInfo{info}); err != nil {
		t.Fatal(err)
	}
	if job.IsSuspended() || *j.Spec.Parallelism != 3 || *j.Spec.Completions != 3 {
		t.Fatalf("after start: suspended %v parallelism %d completions %d", job.IsSuspended(), *j.Spec.Parallelism, *j.Spec.Completions)
	}
	tpl := j.Spec.Template
	if tpl.Spec.NodeSelector["gpu"] != "a100" || tpl.Spec.NodeSelector["team"] != "a" || len(tpl.Spec.Tolerations) != 1 || tpl.Labels[jobframework.PodSetLabel] != "main" {
		t.Fatalf("template after start: %+v", tpl)
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring an admitted job must change it")
	}
	if *j.Spec.Parallelism != 6 || *j.Spec.Completions != 6 || len(j.Spec.Template.Spec.NodeSelector) != 1 ||
		len(j.Spec.Template.Spec.Tolerations) != 0 || len(j.Spec.Template.Labels) != 0 {
		t.Fatalf("after restore: parallelism %d completions %d template %+v", *j.Spec.Parallelism, *j.Spec.Completions, j.Spec.Template)
	}
	if job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring twice must change nothing")
	}
}

func TestConflictingNodeSelectorFailsToStart(t *testing.T) {
	job := New(newJob(nil, nil))
	err := job.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "main", Count: 1, NodeSelector: map[string]string{"team": "b"}}})
	if err == nil {
		t.Fatal("a flavor label that contradicts the job's node selector must be an error")
	}
}

func TestFinishedActiveReadyAndReclaimable(t *testing.T) {
	j := newJob(ptr.To[int32](4), ptr.To[int32](10))
	job := New(j).(*Job)
	if _, _, done := job.Finished(); done {
		t.Fatal("a new job is not finished")
	}
	j.Status = batchv1.JobStatus{Active: 4, Ready: ptr.To[int32](3), Succeeded: 0}
	if !job.IsActive() || job.PodsReady() {
		t.Fatal("4 active, 3 ready: active and not ready")
	}
	j.Status.Ready = ptr.To[int32](4)
	if !job.PodsReady() {
		t.Fatal("4 ready of 4: ready")
	}
	if rp := job.ReclaimablePods(); rp != nil {
		t.Fatalf("10 completions left for 4 pods: nothing to reclaim, got %+v", rp)
	}
	j.Status.Succeeded = 8
	if rp := job.ReclaimablePods(); len(rp) != 1 || rp[0].Count != 2 {
		t.Fatalf("2 completions left for 4 pods: 2 reclaimable, got %+v", rp)
	}
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Message: "BackoffLimitExceeded"}}
	if msg, ok, done := job.Finished(); !done || ok || msg != "BackoffLimitExceeded" {
		t.Fatalf("failed job: %q %v %v", msg, ok, done)
	}
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if _, ok, done := job.Finished(); !done || !ok {
		t.Fatal("a complete job finished successfully")
	}
}

func TestValidateMinParallelism(t *testing.T) {
	cases := map[string]bool{"2": true, "4": true, "0": false, "5": false, "x": false}
	for v, ok := range cases {
		j := newJob(ptr.To[int32](4), nil)
		j.Annotations[MinParallelismAnnotation] = v
		errs := validate(nil, New(j))
		if ok != (len(errs) == 0) {
			t.Errorf("min parallelism %q: errors %v", v, errs)
		}
		for _, e := range errs {
			if e.Field != field.NewPath("metadata", "annotations").Key(MinParallelismAnnotation).String() {
				t.Errorf("error names %s", e.Field)
			}
		}
	}
	oldJob, newJob := newJob(ptr.To[int32](4), nil), newJob(ptr.To[int32](4), nil)
	oldJob.Spec.Suspend, newJob.Spec.Suspend = ptr.To(false), ptr.To(false)
	newJob.Annotations[MinParallelismAnnotation] = "2"
	if errs := validate(New(oldJob), New(newJob)); len(errs) != 1 {
		t.Errorf("adding the annotation to a running job: %v", errs)
	}
}
