package trainjob

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

type wantPodSet struct {
	name  string
	count int32
}

func podSetsOf(t *testing.T, job *TrainJob) []kueue.PodSet {
	t.Helper()
	ps, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func checkPodSets(t *testing.T, ps []kueue.PodSet, want []wantPodSet) {
	t.Helper()
	if len(ps) != len(want) {
		t.Fatalf("podsets %d, want %d: %+v", len(ps), len(want), ps)
	}
	for i, w := range want {
		if string(ps[i].Name) != w.name || ps[i].Count != w.count {
			t.Errorf("podset %d: %s of %d, want %s of %d", i, ps[i].Name, ps[i].Count, w.name, w.count)
		}
	}
}

// The runtime's replicated jobs become the PodSets in its order: the
// initializers one pod each, the trainer mlPolicy.numNodes pods, any other
// job replicas × parallelism.
func TestPodSetsFollowTheRuntime(t *testing.T) {
	job := loaded(t, trainJob(t, `{"runtimeRef":{"name":"torch"}}`), parse(t, torchRuntime))
	checkPodSets(t, podSetsOf(t, job), []wantPodSet{{"dataset-initializer", 1}, {"model-initializer", 1}, {"node", 2}, {"evaluator", 6}})
}

// spec.trainer.numNodes overrides the runtime's node count, and
// resourcesPerNode the trainer container's requests, name by name.
func TestTrainerOverridesNodesAndResources(t *testing.T) {
	job := loaded(t, trainJob(t, `{"runtimeRef":{"name":"torch","kind":"ClusterTrainingRuntime"},
		"trainer":{"numNodes":5,"resourcesPerNode":{"requests":{"cpu":"4","nvidia.com/gpu":"1"}}}}`), parse(t, torchRuntime))
	ps := podSetsOf(t, job)
	checkPodSets(t, ps, []wantPodSet{{"dataset-initializer", 1}, {"model-initializer", 1}, {"node", 5}, {"evaluator", 6}})
	req := ps[2].Template.Spec.Containers[0].Resources.Requests
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	for name, q := range want {
		if got := req[name]; got.Cmp(q) != 0 {
			t.Errorf("node requests %s = %s, want %s (all: %v)", name, got.String(), q.String(), req)
		}
	}
	if got := ps[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; got.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("initializer requests changed: %v", ps[0].Template.Spec.Containers[0].Resources.Requests)
	}
}

// With MPI and the launcher running as a node, the "node" job runs one
// node fewer than numNodes; the launcher stays one pod.
func TestMPILauncherAsNodeCountsOneNodeLess(t *testing.T) {
	rt := parse(t, `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainingRuntime","metadata":{"name":"mpi","namespace":"ns"},
	"spec":{"mlPolicy":{"numNodes":1,"mpi":{"runLauncherAsNode":true}},"template":{"spec":{"replicatedJobs":[
	 {"name":"launcher","template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"trainer"}},"spec":{"template":{"spec":{"containers":[{"name":"node","image":"l"}]}}}}},
	 {"name":"node","template":{"spec":{"template":{"spec":{"containers":[{"name":"node","image":"n"}]}}}}}]}}}}`)
	job := loaded(t, trainJob(t, `{"runtimeRef":{"name":"mpi","kind":"TrainingRuntime"},"trainer":{"numNodes":4}}`), rt)
	checkPodSets(t, podSetsOf(t, job), []wantPodSet{{"launcher", 1}, {"node", 3}})
}

// The user's runtime patches shape the PodSets (a node selector here);
// Kuota's own patch, left from an earlier admission, does not.
func TestUserPatchesShapePodSetsKuotasDoNot(t *testing.T) {
	job := loaded(t, trainJob(t, `{"runtimeRef":{"name":"torch"},"runtimePatches":[
	 {"manager":"example.com/sdk","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"zone":"a"}}}}}}]}}}},
	 {"manager":"kueue.x-k8s.io/manager","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"pool":"old"}}}}}}]}}}}]}`),
		parse(t, torchRuntime))
	ps := podSetsOf(t, job)
	checkPodSets(t, ps, []wantPodSet{{"dataset-initializer", 1}, {"model-initializer", 1}, {"node", 2}, {"evaluator", 6}})
	if ns := ps[2].Template.Spec.NodeSelector; ns["zone"] != "a" || ns["pool"] != "" {
		t.Errorf("node selector %v, want the user's zone=a only", ns)
	}
	if len(ps[2].Template.Spec.Containers) != 1 || ps[2].Template.Spec.Containers[0].Image != "t" {
		t.Errorf("the patch lost the node container: %+v", ps[2].Template.Spec.Containers)
	}
}

// A TrainJob whose runtime does not exist has no PodSets yet: the error
// names spec.runtimeRef and the runtime, and says the job waits.
func TestMissingRuntimeNamesRuntimeRef(t *testing.T) {
	for _, spec := range []string{`{"runtimeRef":{"name":"gone"}}`, `{"runtimeRef":{"name":"gone","kind":"TrainingRuntime"}}`} {
		job := loaded(t, trainJob(t, spec), parse(t, torchRuntime))
		_, err := job.PodSets()
		var missing *jobframework.MissingPrerequisiteError
		if !errors.As(err, &missing) || !strings.Contains(err.Error(), "spec.runtimeRef") || !strings.Contains(err.Error(), `"gone"`) {
			t.Errorf("%s: error %v, want a missing prerequisite naming spec.runtimeRef and the runtime", spec, err)
		}
		if err := job.RunWithPodSetsInfo(nil); !errors.As(err, &missing) {
			t.Errorf("%s: starting without a runtime: %v", spec, err)
		}
	}
}

// An unsupported runtime kind is reported by PodSets, naming the field.
func TestUnsupportedRuntimeKindIsReported(t *testing.T) {
	job := loaded(t, trainJob(t, `{"runtimeRef":{"name":"x","kind":"Other"}}`))
	if _, err := job.PodSets(); err == nil || !strings.Contains(err.Error(), "spec.runtimeRef.kind") {
		t.Errorf("error %v, want one naming spec.runtimeRef.kind", err)
	}
}

func TestSuspendAndResume(t *testing.T) {
	u := trainJob(t, `{"runtimeRef":{"name":"torch"}}`)
	job := New(u)
	if job.IsSuspended() {
		t.Fatal("a TrainJob without spec.suspend is not suspended")
	}
	job.Suspend()
	if !job.IsSuspended() || u.Object["spec"].(map[string]any)["suspend"] != true {
		t.Fatalf("Suspend did not set spec.suspend: %v", u.Object["spec"])
	}
	tj := loaded(t, u, parse(t, torchRuntime))
	if err := tj.RunWithPodSetsInfo(infos(tj, "f1")); err != nil {
		t.Fatal(err)
	}
	if tj.IsSuspended() {
		t.Error("still suspended after RunWithPodSetsInfo")
	}
}

func infos(job *TrainJob, flavor string) []jobframework.PodSetInfo {
	var out []jobframework.PodSetInfo
	for _, rj := range job.jobs {
		out = append(out, jobframework.PodSetInfo{Name: kueue.PodSetReference(rj.Name), Count: rj.Replicas * rj.PodsPerReplica,
			NodeSelector: map[string]string{"pool": flavor},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: flavor, Effect: corev1.TaintEffectNoSchedule}},
			Labels:       map[string]string{jobframework.PodSetLabel: rj.Name},
			Annotations:  map[string]string{jobframework.WorkloadAnnotation: "wl"}})
	}
	return out
}

// kuotaPatch returns Kuota's runtime patch's replicated jobs by name.
func kuotaPatch(t *testing.T, u *unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	patches, err := listAt(u.Object, runtimePatchesPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		if m, _ := stringAt(p, patchManagerPath); m != PatchManager {
			continue
		}
		rjs, err := listAt(p, patchReplicatedJobsPath)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, rj := range rjs {
			name, _ := stringAt(rj, rjPatchNamePath)
			out[name] = rj
		}
		return out
	}
	return nil
}

// An admission goes into Kuota's runtime patch: node selector, labels,
// annotations, and the template's tolerations plus the flavor's; the
// user's patch is kept. Restoring removes Kuota's patch only, and a
// second admission replaces it instead of adding another.
func TestAdmissionIsAKuotaRuntimePatchThatRestoreRemoves(t *testing.T) {
	userPatch := `{"manager":"example.com/sdk","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"zone":"a"}}}}}}]}}}}`
	u := trainJob(t, `{"suspend":true,"runtimeRef":{"name":"torch"},"runtimePatches":[`+userPatch+`]}`)
	job := loaded(t, u, parse(t, torchRuntime))
	if err := job.RunWithPodSetsInfo(infos(job, "f1")); err != nil {
		t.Fatal(err)
	}
	got := kuotaPatch(t, u)
	if len(got) != 4 {
		t.Fatalf("Kuota's patch covers %d replicated jobs, want 4: %v", len(got), got)
	}
	node := got["node"]
	if v := nested(node, rjPatchNodeSelectorPath); toJSON(t, v) != `{"pool":"f1"}` {
		t.Errorf("node selector %s", toJSON(t, v))
	}
	if v := nested(node, append(rjPatchPodMetaPath, "labels")); toJSON(t, v) != `{"kueue.x-k8s.io/podset":"node"}` {
		t.Errorf("labels %s", toJSON(t, v))
	}
	if v := nested(node, append(rjPatchPodMetaPath, "annotations")); toJSON(t, v) != `{"kueue.x-k8s.io/workload":"wl"}` {
		t.Errorf("annotations %s", toJSON(t, v))
	}
	tols := toJSON(t, nested(node, rjPatchTolerationsPath))
	if !strings.Contains(tols, `"key":"gpu"`) || !strings.Contains(tols, `"value":"f1"`) {
		t.Errorf("tolerations %s, want the template's gpu and the flavor's", tols)
	}

	// Re-admission on another flavor replaces Kuota's patch.
	job.Suspend()
	if err := job.RunWithPodSetsInfo(infos(job, "f2")); err != nil {
		t.Fatal(err)
	}
	patches, _ := listAt(u.Object, runtimePatchesPath)
	if len(patches) != 2 || toJSON(t, nested(kuotaPatch(t, u)["node"], rjPatchNodeSelectorPath)) != `{"pool":"f2"}` {
		t.Fatalf("after re-admission: %s", toJSON(t, patches))
	}

	if !job.RestorePodSetsInfo(nil) {
		t.Fatal("RestorePodSetsInfo reported no change")
	}
	patches, _ = listAt(u.Object, runtimePatchesPath)
	if len(patches) != 1 || toJSON(t, patches[0]) != toJSON(t, parse(t, `{"kind":"X","apiVersion":"v1","x":`+userPatch+`}`).Object["x"]) {
		t.Errorf("after restore: %s, want the user's patch alone", toJSON(t, patches))
	}
	if job.RestorePodSetsInfo(nil) {
		t.Error("a second restore reported a change")
	}
}

// Restoring a TrainJob with only Kuota's patch leaves no runtimePatches.
func TestRestoreLeavesNoEmptyPatchList(t *testing.T) {
	u := trainJob(t, `{"suspend":true,"runtimeRef":{"name":"torch"}}`)
	job := loaded(t, u, parse(t, torchRuntime))
	if err := job.RunWithPodSetsInfo(infos(job, "f1")); err != nil {
		t.Fatal(err)
	}
	if !job.RestorePodSetsInfo(nil) {
		t.Fatal("no change")
	}
	if _, ok := u.Object["spec"].(map[string]any)["runtimePatches"]; ok {
		t.Errorf("spec.runtimePatches left: %s", toJSON(t, u.Object["spec"]))
	}
}

// An admission whose PodSets do not match the runtime's jobs, or a flavor
// node label the template sets otherwise, is refused.
func TestRunRefusesMismatchedAdmission(t *testing.T) {
	job := loaded(t, trainJob(t, `{"suspend":true,"runtimeRef":{"name":"torch"}}`), parse(t, torchRuntime))
	in := infos(job, "f1")
	if err := job.RunWithPodSetsInfo(in[:3]); err == nil {
		t.Error("three PodSets for four jobs accepted")
	}
	in[1].Name = in[0].Name
	if err := job.RunWithPodSetsInfo(in); err == nil {
		t.Error("a PodSet twice accepted")
	}
	if !job.IsSuspended() {
		t.Error("a refused admission started the job")
	}
}

func TestFinishedActiveReadyAndReclaimable(t *testing.T) {
	u := trainJob(t, `{"runtimeRef":{"name":"torch"}}`)
	u.Object["status"] = map[string]any{"jobsStatus": []any{
		map[string]any{"name": "dataset-initializer", "ready": int64(0), "succeeded": int64(1), "active": int64(0)},
		map[string]any{"name": "model-initializer", "ready": int64(0), "succeeded": int64(1), "active": int64(0)},
		map[string]any{"name": "node", "ready": int64(1), "succeeded": int64(0), "active": int64(1)},
		map[string]any{"name": "evaluator", "ready": int64(1), "succeeded": int64(0), "active": int64(2)},
	}}
	job := loaded(t, u, parse(t, torchRuntime))
	if !job.IsActive() {
		t.Error("not active with active child Jobs")
	}
	if job.PodsReady() {
		t.Error("ready with one of two evaluator replicas ready")
	}
	rec := job.ReclaimablePods()
	if toJSON(t, rec) != `[{"name":"dataset-initializer","count":1},{"name":"model-initializer","count":1}]` {
		t.Errorf("reclaimable %s", toJSON(t, rec))
	}
	u.Object["status"].(map[string]any)["jobsStatus"].([]any)[3].(map[string]any)["ready"] = int64(2)
	if !job.PodsReady() {
		t.Error("not ready with every child Job ready or succeeded")
	}
	if _, _, finished := job.Finished(); finished {
		t.Error("finished without a condition")
	}
	u.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Failed", "status": "True", "message": "node 0 crashed"}}
	if msg, ok, finished := job.Finished(); !finished || ok || msg != "node 0 crashed" {
		t.Errorf("Finished() = %q %v %v, want failed with the message", msg, ok, finished)
	}
	u.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Complete", "status": "True", "message": "done"}}
	if _, ok, finished := job.Finished(); !finished || !ok {
		t.Error("Complete=True is not a success")
	}
}

// The runtime watches bring back the TrainJobs naming the runtime, and
// only those.
func TestRuntimeWatchFindsItsTrainJobs(t *testing.T) {
	other := trainJob(t, `{"runtimeRef":{"name":"other"}}`)
	other.SetName("other")
	ns := trainJob(t, `{"runtimeRef":{"name":"torch","kind":"TrainingRuntime"}}`)
	ns.SetName("namespaced")
	objs := objects{trainJob(t, `{"runtimeRef":{"name":"torch"}}`), other, ns}
	ws := New(nil).(*TrainJob).PrerequisiteWatches(objs)
	ctr := parse(t, torchRuntime)
	var names []string
	for _, w := range ws {
		if w.Object.GetObjectKind().GroupVersionKind() == ClusterTrainingRuntimeGVK {
			for _, r := range w.Jobs(context.Background(), ctr) {
				names = append(names, r.Name)
			}
		}
	}
	if strings.Join(names, ",") != "tj" {
		t.Errorf("ClusterTrainingRuntime torch concerns %v, want [tj]", names)
	}
}
