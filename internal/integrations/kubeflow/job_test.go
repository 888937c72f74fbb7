package kubeflow

import (
	"slices"
	"strings"
	"testing"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func podTemplate(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "a"},
			Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
	}
}

func v1Spec(replicas *int32, cpu string) *kftraining.ReplicaSpec {
	return &kftraining.ReplicaSpec{Replicas: replicas, Template: podTemplate(cpu)}
}

func meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "ns", Name: "train", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}}
}

func pytorch(specs map[kftraining.ReplicaType]*kftraining.ReplicaSpec) *kftraining.PyTorchJob {
	return &kftraining.PyTorchJob{ObjectMeta: meta(), Spec: kftraining.PyTorchJobSpec{
		RunPolicy: kftraining.RunPolicy{Suspend: ptr.To(true)}, PyTorchReplicaSpecs: specs}}
}

func mpiJob(specs map[mpi.MPIReplicaType]*mpi.ReplicaSpec) *mpi.MPIJob {
	return &mpi.MPIJob{ObjectMeta: meta(), Spec: mpi.MPIJobSpec{RunPolicy: mpi.RunPolicy{Suspend: ptr.To(true)}, MPIReplicaSpecs: specs}}
}

type podSetWant struct {
	name  kueue.PodSetReference
	count int32
	cpu   string
}

// Each replica type present is one PodSet named after it, lower-cased, in
// Kueue's order whatever the map's order, with the replica count (the
// operator's default when unset) and the replica's pod template.
func TestPodSetsFollowKueueOrderPerKind(t *testing.T) {
	cases := []struct {
		name string
		in   jobframework.Integration
		obj  client.Object
		want []podSetWant
	}{
		{"PyTorchJob", PyTorchJobIntegration, pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
			"Worker": v1Spec(ptr.To[int32](3), "2"), "Master": v1Spec(nil, "1")}),
			[]podSetWant{{"master", 1, "1"}, {"worker", 3, "2"}}},
		{"TFJob", TFJobIntegration, &kftraining.TFJob{ObjectMeta: meta(), Spec: kftraining.TFJobSpec{
			TFReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				"Evaluator": v1Spec(ptr.To[int32](1), "5"), "Worker": v1Spec(ptr.To[int32](4), "4"),
				"PS": v1Spec(ptr.To[int32](2), "3"), "Chief": v1Spec(nil, "1")}}},
			[]podSetWant{{"chief", 1, "1"}, {"ps", 2, "3"}, {"worker", 4, "4"}, {"evaluator", 1, "5"}}},
		{"TFJob with Master", TFJobIntegration, &kftraining.TFJob{ObjectMeta: meta(), Spec: kftraining.TFJobSpec{
			TFReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				"Worker": v1Spec(ptr.To[int32](2), "2"), "Master": v1Spec(nil, "1")}}},
			[]podSetWant{{"master", 1, "1"}, {"worker", 2, "2"}}},
		{"XGBoostJob", XGBoostJobIntegration, &kftraining.XGBoostJob{ObjectMeta: meta(), Spec: kftraining.XGBoostJobSpec{
			XGBReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				"Worker": v1Spec(ptr.To[int32](2), "2"), "Master": v1Spec(ptr.To[int32](1), "1")}}},
			[]podSetWant{{"master", 1, "1"}, {"worker", 2, "2"}}},
		{"PaddleJob", PaddleJobIntegration, &kftraining.PaddleJob{ObjectMeta: meta(), Spec: kftraining.PaddleJobSpec{
			PaddleReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
				"Worker": v1Spec(ptr.To[int32](5), "2"), "Master": v1Spec(ptr.To[int32](1), "1")}}},
			[]podSetWant{{"master", 1, "1"}, {"worker", 5, "2"}}},
		{"JAXJob", JAXJobIntegration, &kftraining.JAXJob{ObjectMeta: meta(), Spec: kftraining.JAXJobSpec{
			JAXReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Worker": v1Spec(ptr.To[int32](8), "1")}}},
			[]podSetWant{{"worker", 8, "1"}}},
		{"MPIJob", MPIJobIntegration, mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{
			"Worker": {Replicas: ptr.To[int32](4), Template: podTemplate("2")}, "Launcher": {Template: podTemplate("1")}}),
			[]podSetWant{{"launcher", 1, "1"}, {"worker", 4, "2"}}},
		{"MPIJob worker without replicas", MPIJobIntegration, mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{
			"Launcher": {Template: podTemplate("1")}, "Worker": {Template: podTemplate("2")}}),
			[]podSetWant{{"launcher", 1, "1"}, {"worker", 0, "2"}}},
	}
	for _, c := range cases {
		// Maps iterate in random order: ask several times.
		for range 10 {
			ps, err := c.in.NewJob(c.obj).PodSets()
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var got []podSetWant
			for _, p := range ps {
				got = append(got, podSetWant{p.Name, p.Count, p.Template.Spec.Containers[0].Resources.Requests.Cpu().String()})
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("%s: podsets %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// A replica type the kind does not know cannot be accounted for: the job
// gets no Workload, with an error naming the field.
func TestUnknownReplicaTypeIsAnErrorNamingTheField(t *testing.T) {
	job := PyTorchJobIntegration.NewJob(pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
		"Master": v1Spec(nil, "1"), "Launcher": v1Spec(nil, "1")}))
	_, err := job.PodSets()
	if err == nil || !strings.Contains(err.Error(), "spec.pytorchReplicaSpecs[Launcher]") {
		t.Fatalf("error %v, want one naming spec.pytorchReplicaSpecs[Launcher]", err)
	}
}

func TestSuspendUsesRunPolicy(t *testing.T) {
	pj := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1")})
	pj.Spec.RunPolicy.Suspend = nil
	job := PyTorchJobIntegration.NewJob(pj)
	if job.IsSuspended() {
		t.Fatal("a job without runPolicy.suspend is not suspended")
	}
	job.Suspend()
	if !ptr.Deref(pj.Spec.RunPolicy.Suspend, false) || !job.IsSuspended() {
		t.Fatal("Suspend must set runPolicy.suspend")
	}
	mj := mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Template: podTemplate("1")}})
	mj.Spec.RunPolicy.Suspend = ptr.To(false)
	MPIJobIntegration.NewJob(mj).Suspend()
	if !ptr.Deref(mj.Spec.RunPolicy.Suspend, false) {
		t.Fatal("Suspend must set the MPIJob's runPolicy.suspend")
	}
}

// An admission goes into each replica type's own template (its PodSet's
// flavor), the job resumes; stopping puts every template back as the
// Workload recorded it.
func TestRunAppliesEachPodSetsFlavorAndRestoreUndoesIt(t *testing.T) {
	pj := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
		"Master": v1Spec(nil, "1"), "Worker": v1Spec(ptr.To[int32](2), "1")})
	job := PyTorchJobIntegration.NewJob(pj)
	ps, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}}
	tol := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	infos := []jobframework.PodSetInfo{
		{Name: "worker", Count: 2, NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{tol},
			Labels: map[string]string{jobframework.PodSetLabel: "worker"}, Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}},
		{Name: "master", Count: 1, NodeSelector: map[string]string{"pool": "cpu"},
			Labels: map[string]string{jobframework.PodSetLabel: "master"}, Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}},
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	if job.IsSuspended() {
		t.Fatal("the job must resume")
	}
	master, worker := pj.Spec.PyTorchReplicaSpecs["Master"].Template, pj.Spec.PyTorchReplicaSpecs["Worker"].Template
	if master.Spec.NodeSelector["pool"] != "cpu" || master.Spec.NodeSelector["team"] != "a" || len(master.Spec.Tolerations) != 0 ||
		master.Labels[jobframework.PodSetLabel] != "master" || master.Labels["app"] != "train" {
		t.Fatalf("master template %+v", master)
	}
	if worker.Spec.NodeSelector["pool"] != "gpu" || len(worker.Spec.Tolerations) != 1 ||
		worker.Labels[jobframework.PodSetLabel] != "worker" || worker.Annotations[jobframework.WorkloadAnnotation] != "wl" {
		t.Fatalf("worker template %+v", worker)
	}
	if *pj.Spec.PyTorchReplicaSpecs["Worker"].Replicas != 2 {
		t.Fatal("the replica count must not change")
	}

	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring must report a change")
	}
	for typ, spec := range pj.Spec.PyTorchReplicaSpecs {
		want := podTemplate("1")
		if !slices.Equal(mapKeys(spec.Template.Spec.NodeSelector), mapKeys(want.Spec.NodeSelector)) || len(spec.Template.Spec.Tolerations) != 0 ||
			len(spec.Template.Labels) != 1 || len(spec.Template.Annotations) != 0 {
			t.Fatalf("%s template not restored: %+v", typ, spec.Template)
		}
	}
	if job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring twice must report no change")
	}
}

func mapKeys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// An admission that does not match the job's replica types does not start
// it.
func TestRunRefusesAnAdmissionForOtherPodSets(t *testing.T) {
	mj := mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{
		"Launcher": {Template: podTemplate("1")}, "Worker": {Replicas: ptr.To[int32](2), Template: podTemplate("1")}})
	job := MPIJobIntegration.NewJob(mj)
	for _, infos := range [][]jobframework.PodSetInfo{
		{{Name: "launcher"}},
		{{Name: "launcher"}, {Name: "main"}},
	} {
		if err := job.RunWithPodSetsInfo(infos); err == nil || !job.IsSuspended() {
			t.Fatalf("admission %v: error %v, suspended %v; want an error and the job held", infos, err, job.IsSuspended())
		}
	}
	if err := job.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "launcher"}, {Name: "worker", NodeSelector: map[string]string{"pool": "x"}}}); err != nil {
		t.Fatal(err)
	}
	if mj.Spec.MPIReplicaSpecs["Worker"].Template.Spec.NodeSelector["pool"] != "x" || job.IsSuspended() {
		t.Fatalf("MPIJob not started with the worker's flavor: %+v", mj.Spec)
	}
}

func TestFinishedActiveAndReadyFromStatus(t *testing.T) {
	pj := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1")})
	job := PyTorchJobIntegration.NewJob(pj)
	if _, _, finished := job.Finished(); finished || job.IsActive() || job.PodsReady() {
		t.Fatal("a new job is not finished, active or ready")
	}
	pj.Status.ReplicaStatuses = map[kftraining.ReplicaType]*kftraining.ReplicaStatus{"Master": {Active: 1}, "Worker": nil}
	pj.Status.Conditions = []kftraining.JobCondition{{Type: kftraining.JobRunning, Status: corev1.ConditionTrue}}
	if !job.IsActive() || !job.PodsReady() {
		t.Fatal("a running job with an active pod is active and ready")
	}
	if _, _, finished := job.Finished(); finished {
		t.Fatal("running is not finished")
	}
	pj.Status.Conditions = append(pj.Status.Conditions, kftraining.JobCondition{Type: kftraining.JobFailed, Status: corev1.ConditionTrue, Message: "OOM"})
	if msg, ok, finished := job.Finished(); !finished || ok || msg != "OOM" {
		t.Fatalf("failed job: %q %v %v", msg, ok, finished)
	}

	mj := mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Template: podTemplate("1")}})
	mj.Status.Conditions = []mpi.JobCondition{{Type: mpi.JobSucceeded, Status: corev1.ConditionTrue}}
	if _, ok, finished := MPIJobIntegration.NewJob(mj).Finished(); !finished || !ok {
		t.Fatal("a Succeeded MPIJob is finished successfully")
	}
	mj.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, _, finished := MPIJobIntegration.NewJob(mj).Finished(); finished {
		t.Fatal("a false Succeeded condition does not finish the job")
	}
}

// The reconciler reads into the object the adapter wraps after making it:
// the adapter must see what was read.
func TestNewJobReadsTheObjectLate(t *testing.T) {
	for _, in := range []jobframework.Integration{PyTorchJobIntegration, MPIJobIntegration} {
		job := in.NewJob(nil)
		switch o := job.Object().(type) {
		case *kftraining.PyTorchJob:
			*o = *pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1")})
		case *mpi.MPIJob:
			*o = *mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Template: podTemplate("1")}})
		default:
			t.Fatalf("%s: object %T", in.Name, o)
		}
		if ps, err := job.PodSets(); err != nil || len(ps) != 1 || !job.IsSuspended() {
			t.Fatalf("%s: podsets %v (%v), suspended %v", in.Name, ps, err, job.IsSuspended())
		}
	}
}
