package spark

import (
	"fmt"
	"strings"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func requests(ps kueue.PodSet) corev1.ResourceList {
	return ps.Template.Spec.Containers[0].Resources.Requests
}

func TestPodSetsAreTheDriverAndTheExecutors(t *testing.T) {
	app := newApp()
	app.Spec.Executor.GPU = &sparkv1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
	app.Spec.Driver.Template = &corev1.PodTemplateSpec{}
	app.Spec.Driver.Template.Labels = map[string]string{"from": "template"}
	app.Spec.Driver.Template.Spec.Containers = []corev1.Container{{Name: "sidecar"}, {Name: "spark-kubernetes-driver"}}
	ps, err := New(app).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != DriverPodSet || ps[0].Count != 1 || ps[1].Name != ExecutorPodSet || ps[1].Count != 3 {
		t.Fatalf("PodSets %v, want driver of 1 then executor of 3", names(ps))
	}
	driver := ps[0].Template
	main := driver.Spec.Containers[1]
	if main.Name != "spark-kubernetes-driver" || main.Image != "spark:4.0.0" {
		t.Errorf("driver container %q image %q, want the template's spark-kubernetes-driver with the application's image", main.Name, main.Image)
	}
	// 2 cores; 2g plus max(10%, 384Mi).
	if q := main.Resources.Requests; q.Cpu().String() != "2" || q.Memory().String() != "2432Mi" {
		t.Errorf("driver requests cpu %s memory %s, want 2 and 2432Mi", q.Cpu(), q.Memory())
	}
	if driver.Labels["team"] != "a" || driver.Labels["from"] != "template" || driver.Spec.PriorityClassName != "high" {
		t.Errorf("driver labels %v priority class %q, want the template's and spec.driver.labels, and high", driver.Labels, driver.Spec.PriorityClassName)
	}
	exec := ps[1].Template
	q := requests(ps[1])
	if q.Cpu().String() != "500m" || q.Memory().String() != "1536Mi" || q.Name("nvidia.com/gpu", resource.DecimalSI).String() != "1" {
		t.Errorf("executor requests %v, want cpu 500m, memory 1536Mi (1g + 512m overhead), 1 GPU", q)
	}
	if exec.Spec.Containers[0].Name != "spark-kubernetes-executor" || exec.Spec.NodeSelector["disk"] != "ssd" || len(exec.Spec.Tolerations) != 1 {
		t.Errorf("executor template %+v, want the spark-kubernetes-executor container, disk=ssd and the batch toleration", exec.Spec)
	}
}

func names(ps []kueue.PodSet) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s=%d", p.Name, p.Count))
	}
	return out
}

func TestExecutorCount(t *testing.T) {
	app := newApp()
	app.Spec.Executor.Instances = nil
	if n, errs := executorCount(app); n != 1 || len(errs) > 0 {
		t.Errorf("no instances: %d executors (%v), want the operator's default of 1", n, errs)
	}
	app.Spec.SparkConf = map[string]string{"spark.executor.instances": "5"}
	if n, _ := executorCount(app); n != 5 {
		t.Errorf("spark.executor.instances=5: %d executors, want 5", n)
	}
	app.Spec.Executor.Instances = ptr.To[int32](4)
	if n, _ := executorCount(app); n != 4 {
		t.Errorf("spec.executor.instances=4 wins over spark.executor.instances: got %d", n)
	}
	app.Spec.Executor.Instances = nil
	app.Spec.SparkConf["spark.executor.instances"] = "many"
	if _, errs := executorCount(app); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "spec.sparkConf[spark.executor.instances]") {
		t.Errorf("a bad spark.executor.instances: %v, want an error naming it", errs)
	}
}

func TestRunPutsTheAdmissionIntoDriverAndExecutorAndRestoreTakesItBack(t *testing.T) {
	app := newApp()
	original := app.DeepCopy()
	job := New(app)
	podSets, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if err := job.RunWithPodSetsInfo(admission(podSets)); err != nil {
		t.Fatal(err)
	}
	if job.IsSuspended() {
		t.Fatal("still suspended after the admission")
	}
	for _, r := range []struct {
		name string
		ps   *sparkv1beta2.SparkPodSpec
	}{{"driver", &app.Spec.Driver.SparkPodSpec}, {"executor", &app.Spec.Executor.SparkPodSpec}} {
		if r.ps.NodeSelector["pool"] != "spot" || r.ps.Labels[jobframework.PodSetLabel] != r.name ||
			r.ps.Annotations[jobframework.WorkloadAnnotation] != "wl" || !hasToleration(r.ps.Tolerations, "spot") {
			t.Errorf("spec.%s after the admission: node selector %v labels %v annotations %v tolerations %v", r.name, r.ps.NodeSelector, r.ps.Labels, r.ps.Annotations, r.ps.Tolerations)
		}
	}
	if app.Spec.Executor.NodeSelector["disk"] != "ssd" || app.Spec.Driver.Labels["team"] != "a" {
		t.Error("the admission dropped the application's own node selector or labels")
	}
	admitted, _ := job.PodSets()
	if admitted[1].Template.Spec.NodeSelector["pool"] != "spot" {
		t.Errorf("the executors' pods would not get the flavor's node selector: %v", admitted[1].Template.Spec.NodeSelector)
	}

	job.Suspend()
	if !job.RestorePodSetsInfo(restoreInfos(podSets)) {
		t.Error("restoring reported no change")
	}
	if !equality.Semantic.DeepEqual(app.Spec.Driver, original.Spec.Driver) || !equality.Semantic.DeepEqual(app.Spec.Executor, original.Spec.Executor) {
		t.Errorf("restored driver %+v executor %+v, want the original ones", app.Spec.Driver.SparkPodSpec, app.Spec.Executor.SparkPodSpec)
	}
	if job.RestorePodSetsInfo(restoreInfos(podSets)) {
		t.Error("restoring twice reported a change")
	}
}

func hasToleration(ts []corev1.Toleration, key string) bool {
	for _, t := range ts {
		if t.Key == key {
			return true
		}
	}
	return false
}

func TestApplicationLevelNodeSelectorGetsTheFlavor(t *testing.T) {
	app := newApp()
	app.Spec.Executor.NodeSelector = nil
	app.Spec.NodeSelector = map[string]string{"zone": "a"}
	job := New(app)
	podSets, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if podSets[0].Template.Spec.NodeSelector["zone"] != "a" || podSets[1].Template.Spec.NodeSelector["zone"] != "a" {
		t.Errorf("spec.nodeSelector does not reach both PodSets: %v %v", podSets[0].Template.Spec.NodeSelector, podSets[1].Template.Spec.NodeSelector)
	}
	if err := job.RunWithPodSetsInfo(admission(podSets)); err != nil {
		t.Fatal(err)
	}
	if app.Spec.NodeSelector["pool"] != "spot" || app.Spec.Driver.NodeSelector != nil || app.Spec.Executor.NodeSelector != nil {
		t.Errorf("node selectors after the admission: spec %v driver %v executor %v; want the flavor in spec.nodeSelector only",
			app.Spec.NodeSelector, app.Spec.Driver.NodeSelector, app.Spec.Executor.NodeSelector)
	}
	job.Suspend()
	job.RestorePodSetsInfo(restoreInfos(podSets))
	if len(app.Spec.NodeSelector) != 1 || app.Spec.NodeSelector["zone"] != "a" {
		t.Errorf("restored spec.nodeSelector %v, want zone=a", app.Spec.NodeSelector)
	}

	other := New(newApp())
	other.(*Application).app.Spec.Executor.NodeSelector = nil
	other.(*Application).app.Spec.NodeSelector = map[string]string{"zone": "a"}
	infos := admission(podSets)
	infos[1].NodeSelector = map[string]string{"pool": "on-demand"}
	if err := other.RunWithPodSetsInfo(infos); err == nil || !strings.Contains(err.Error(), "spec.nodeSelector") {
		t.Errorf("driver and executors on flavors of different node labels with spec.nodeSelector: %v, want an error naming spec.nodeSelector", err)
	}
}

func TestRunRefusesAFlavorThatConflictsWithTheNodeSelector(t *testing.T) {
	app := newApp()
	job := New(app)
	podSets, _ := job.PodSets()
	infos := admission(podSets)
	infos[1].NodeSelector = map[string]string{"disk": "hdd"}
	if err := job.RunWithPodSetsInfo(infos); err == nil {
		t.Error("executors asking for disk=ssd admitted to a flavor of disk=hdd: no error")
	}
	if !job.IsSuspended() {
		t.Error("a refused admission started the application")
	}
}

func TestFinishedActiveAndReady(t *testing.T) {
	for _, tc := range []struct {
		state                     sparkv1beta2.ApplicationStateType
		finished, success, active bool
	}{
		{sparkv1beta2.ApplicationStateNew, false, false, false},
		{sparkv1beta2.ApplicationStateSubmitted, false, false, true},
		{sparkv1beta2.ApplicationStateRunning, false, false, true},
		{sparkv1beta2.ApplicationStateSuspending, false, false, true},
		{sparkv1beta2.ApplicationStateSuspended, false, false, false},
		{sparkv1beta2.ApplicationStateCompleted, true, true, false},
		{sparkv1beta2.ApplicationStateFailed, true, false, false},
		{sparkv1beta2.ApplicationStateFailedSubmission, true, false, false},
	} {
		app := newApp()
		app.Status.AppState.State = tc.state
		job := New(app)
		_, success, finished := job.Finished()
		if finished != tc.finished || success != tc.success || job.IsActive() != tc.active {
			t.Errorf("state %q: finished %v success %v active %v, want %v %v %v", tc.state, finished, success, job.IsActive(), tc.finished, tc.success, tc.active)
		}
	}
	app := newApp()
	app.Status.AppState = sparkv1beta2.ApplicationState{State: sparkv1beta2.ApplicationStateFailed, ErrorMessage: "driver OOMKilled"}
	if msg, _, _ := New(app).Finished(); msg != "driver OOMKilled" {
		t.Errorf("message %q, want the operator's error message", msg)
	}

	app = newApp()
	app.Status.AppState.State = sparkv1beta2.ApplicationStateRunning
	app.Status.ExecutorState = map[string]sparkv1beta2.ExecutorState{"e1": sparkv1beta2.ExecutorStateRunning, "e2": sparkv1beta2.ExecutorStateRunning, "e3": sparkv1beta2.ExecutorStatePending}
	if New(app).PodsReady() {
		t.Error("ready with 2 of 3 executors running")
	}
	app.Status.ExecutorState["e3"] = sparkv1beta2.ExecutorStateRunning
	if !New(app).PodsReady() {
		t.Error("not ready with the driver and 3 of 3 executors running")
	}
}
