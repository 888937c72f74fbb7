package ray

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

type wantPodSet struct {
	name  kueue.PodSetReference
	count int32
	cpu   string
}

func checkPodSets(t *testing.T, job jobframework.Job, want []wantPodSet) {
	t.Helper()
	got, err := job.PodSets()
	if err != nil {
		t.Fatalf("PodSets: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("PodSets: got %d (%v), want %d", len(got), got, len(want))
	}
	for i, w := range want {
		ps := got[i]
		cpu := ps.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
		if ps.Name != w.name || ps.Count != w.count || cpu.Cmp(resource.MustParse(w.cpu)) != 0 {
			t.Errorf("PodSet %d: got %s x%d cpu %s, want %s x%d cpu %s", i, ps.Name, ps.Count, cpu.String(), w.name, w.count, w.cpu)
		}
	}
}

func TestRayJobPodSets(t *testing.T) {
	// Head, then the worker groups by lower-cased name with replicas x
	// numOfHosts pods, then the operator's default submitter.
	checkPodSets(t, NewRayJob(newRayJob()), []wantPodSet{
		{"head", 1, "1"}, {"small", 3, "500m"}, {"tpu", 8, "2"}, {"submitter", 1, "500m"},
	})

	withTemplate := newRayJob()
	sub := podTemplateWith("250m")
	withTemplate.Spec.SubmitterPodTemplate = &sub
	checkPodSets(t, NewRayJob(withTemplate), []wantPodSet{
		{"head", 1, "1"}, {"small", 3, "500m"}, {"tpu", 8, "2"}, {"submitter", 1, "250m"},
	})

	for _, mode := range []rayv1.JobSubmissionMode{rayv1.HTTPMode, rayv1.InteractiveMode, rayv1.SidecarMode} {
		j := newRayJob()
		j.Spec.SubmissionMode = mode
		checkPodSets(t, NewRayJob(j), []wantPodSet{{"head", 1, "1"}, {"small", 3, "500m"}, {"tpu", 8, "2"}})
	}

	noCluster := newRayJob()
	noCluster.Spec.RayClusterSpec = nil
	if _, err := NewRayJob(noCluster).PodSets(); err == nil || !strings.Contains(err.Error(), "spec.rayClusterSpec") {
		t.Errorf("PodSets without a cluster spec: got %v, want an error naming spec.rayClusterSpec", err)
	}
}

func TestClusterPodSets(t *testing.T) {
	want := []wantPodSet{{"head", 1, "1"}, {"small", 3, "500m"}, {"tpu", 8, "2"}}
	checkPodSets(t, NewRayCluster(newRayCluster()), want)
	checkPodSets(t, NewRayService(newRayService()), want)

	dup := newRayCluster()
	dup.Spec.WorkerGroupSpecs[1].GroupName = "Small"
	if _, err := NewRayCluster(dup).PodSets(); err == nil || !strings.Contains(err.Error(), `"small"`) {
		t.Errorf("PodSets with groups small and Small: got %v, want an error naming the clashing PodSet", err)
	}
}

// runAndRestore admits job, checks every template got its flavor and the
// job runs, then restores it and checks it is as it was.
func runAndRestore(t *testing.T, job jobframework.Job, templates func() []*corev1.PodTemplateSpec, names ...string) {
	t.Helper()
	before := job.Object().DeepCopyObject()
	wl, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if err := job.RunWithPodSetsInfo(admitted(names...)); err != nil {
		t.Fatalf("RunWithPodSetsInfo: %v", err)
	}
	if job.IsSuspended() {
		t.Error("the job is still suspended after its admission")
	}
	for i, tpl := range templates() {
		if got := tpl.Spec.NodeSelector["pool"]; got != names[i] {
			t.Errorf("template %s: node selector pool=%q, want %q", names[i], got, names[i])
		}
		if got := tpl.Labels[jobframework.PodSetLabel]; got != names[i] {
			t.Errorf("template %s: podset label %q", names[i], got)
		}
		if len(tpl.Spec.Tolerations) != 1 {
			t.Errorf("template %s: tolerations %v", names[i], tpl.Spec.Tolerations)
		}
	}
	job.Suspend()
	restoreInfos := make([]jobframework.PodSetInfo, 0, len(wl))
	for _, ps := range wl {
		restoreInfos = append(restoreInfos, jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count,
			NodeSelector: ps.Template.Spec.NodeSelector, Tolerations: ps.Template.Spec.Tolerations,
			Labels: ps.Template.Labels, Annotations: ps.Template.Annotations})
	}
	if !job.RestorePodSetsInfo(restoreInfos) {
		t.Error("RestorePodSetsInfo reported no change")
	}
	if !equality.Semantic.DeepEqual(before, job.Object()) {
		t.Errorf("after restore the object differs from the original:\n%+v\n%+v", before, job.Object())
	}
	if job.RestorePodSetsInfo(restoreInfos) {
		t.Error("a second RestorePodSetsInfo reported a change")
	}
}

func TestRayJobRunAndRestore(t *testing.T) {
	j := newRayJob()
	sub := podTemplateWith("250m")
	j.Spec.SubmitterPodTemplate = &sub
	runAndRestore(t, NewRayJob(j), func() []*corev1.PodTemplateSpec {
		s := j.Spec.RayClusterSpec
		return []*corev1.PodTemplateSpec{&s.HeadGroupSpec.Template, &s.WorkerGroupSpecs[0].Template, &s.WorkerGroupSpecs[1].Template, j.Spec.SubmitterPodTemplate}
	}, "head", "small", "tpu", "submitter")

	// Without a submitter template, the operator's default is written into
	// the RayJob with the admission, so that the submitter pod runs on its
	// flavor's nodes; its PodSet stays the same.
	plain := newRayJob()
	before, err := NewRayJob(plain.DeepCopy()).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if err := NewRayJob(plain).RunWithPodSetsInfo(admitted("head", "small", "tpu", "submitter")); err != nil {
		t.Fatal(err)
	}
	got := plain.Spec.SubmitterPodTemplate
	if got == nil || got.Spec.NodeSelector["pool"] != "submitter" || len(got.Spec.Tolerations) != 1 ||
		got.Spec.Containers[0].Resources.Requests.Cpu().String() != "500m" {
		t.Fatalf("submitter template after admission = %+v, want the operator's default with the submitter's admission", got)
	}
	var restoreInfos []jobframework.PodSetInfo
	for _, ps := range before {
		restoreInfos = append(restoreInfos, jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count,
			NodeSelector: ps.Template.Spec.NodeSelector, Tolerations: ps.Template.Spec.Tolerations,
			Labels: ps.Template.Labels, Annotations: ps.Template.Annotations})
	}
	if !NewRayJob(plain).RestorePodSetsInfo(restoreInfos) {
		t.Error("restoring reported no change")
	}
	after, err := NewRayJob(plain).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(before[3].Template.Spec, after[3].Template.Spec) {
		t.Errorf("the submitter PodSet changed:\n%+v\n%+v", before[3].Template.Spec, after[3].Template.Spec)
	}

	// An admission that does not match the PodSets is refused, unapplied.
	short := newRayJob()
	if err := NewRayJob(short).RunWithPodSetsInfo(admitted("head", "small")); err == nil || !short.Spec.Suspend {
		t.Errorf("an admission of 2 PodSets for 4: err %v, suspended %v", err, short.Spec.Suspend)
	}
}

func TestRayClusterRunAndRestore(t *testing.T) {
	c := newRayCluster()
	c.Spec.Suspend = ptr.To(true)
	runAndRestore(t, NewRayCluster(c), func() []*corev1.PodTemplateSpec {
		return []*corev1.PodTemplateSpec{&c.Spec.HeadGroupSpec.Template, &c.Spec.WorkerGroupSpecs[0].Template, &c.Spec.WorkerGroupSpecs[1].Template}
	}, "head", "small", "tpu")
}

func TestRayServiceRunAndRestore(t *testing.T) {
	s := newRayService()
	svc := NewRayService(s)
	svc.Suspend()
	if !ptr.Deref(s.Spec.RayClusterSpec.Suspend, false) {
		t.Fatal("Suspend did not set spec.rayClusterConfig.suspend")
	}
	runAndRestore(t, svc, func() []*corev1.PodTemplateSpec {
		c := &s.Spec.RayClusterSpec
		return []*corev1.PodTemplateSpec{&c.HeadGroupSpec.Template, &c.WorkerGroupSpecs[0].Template, &c.WorkerGroupSpecs[1].Template}
	}, "head", "small", "tpu")
}

func TestRayJobStatus(t *testing.T) {
	cases := []struct {
		name                      string
		status                    rayv1.RayJobStatus
		finished, success, active bool
		ready                     bool
	}{
		{name: "new"},
		{name: "initializing", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusInitializing}, active: true},
		{name: "running", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusRunning, JobStatus: rayv1.JobStatusRunning,
			RayClusterStatus: rayv1.RayClusterStatus{State: rayv1.Ready}}, active: true, ready: true},
		{name: "suspending", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusSuspending}, active: true},
		{name: "suspended", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusSuspended}},
		{name: "succeeded", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusComplete, JobStatus: rayv1.JobStatusSucceeded}, finished: true, success: true},
		{name: "failed", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusFailed, JobStatus: rayv1.JobStatusFailed, Message: "boom"}, finished: true},
		{name: "job stopped", status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusComplete, JobStatus: rayv1.JobStatusStopped}, finished: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newRayJob()
			j.Status = tc.status
			job := NewRayJob(j)
			msg, success, finished := job.Finished()
			if finished != tc.finished || success != tc.success {
				t.Errorf("Finished: got finished %v success %v, want %v %v", finished, success, tc.finished, tc.success)
			}
			if finished && msg == "" {
				t.Error("Finished: empty message")
			}
			if tc.status.Message != "" && msg != tc.status.Message {
				t.Errorf("Finished: message %q, want the operator's %q", msg, tc.status.Message)
			}
			if job.IsActive() != tc.active {
				t.Errorf("IsActive: got %v, want %v", job.IsActive(), tc.active)
			}
			if job.PodsReady() != tc.ready {
				t.Errorf("PodsReady: got %v, want %v", job.PodsReady(), tc.ready)
			}
		})
	}
}

func TestLongRunningKinds(t *testing.T) {
	c := newRayCluster()
	c.Status = rayv1.RayClusterStatus{State: rayv1.Ready, ReadyWorkerReplicas: 11}
	rc := NewRayCluster(c)
	if _, _, finished := rc.Finished(); finished {
		t.Error("a RayCluster finished")
	}
	if !rc.IsActive() || !rc.PodsReady() {
		t.Error("a ready RayCluster is not active and ready")
	}
	c.Status = rayv1.RayClusterStatus{State: rayv1.Suspended}
	if rc.IsActive() || rc.PodsReady() {
		t.Error("a suspended RayCluster is active or ready")
	}

	s := newRayService()
	rs := NewRayService(s)
	if rs.IsActive() || rs.PodsReady() {
		t.Error("a RayService without the Ready condition is active or ready")
	}
	s.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue}}
	if !rs.IsActive() || !rs.PodsReady() {
		t.Error("a Ready RayService is not active and ready")
	}
	if _, _, finished := rs.Finished(); finished {
		t.Error("a RayService finished")
	}
}
