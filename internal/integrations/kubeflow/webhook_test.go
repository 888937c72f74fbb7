package kubeflow

import (
	"context"
	"strings"
	"testing"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func fakeClient(t testing.TB) client.Client {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, kftraining.AddToScheme, mpi.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}},
	).Build()
}

func webhookFor(c client.Client, in jobframework.Integration, opts jobframework.Options) *jobframework.Webhook {
	return &jobframework.Webhook{Client: c, Integration: in, Options: opts, Validate: validator(opts)}
}

// Bad replica specs are refused on create with an error naming the field;
// good ones pass.
func TestWebhookRefusesBadReplicaSpecsNamingTheField(t *testing.T) {
	c := fakeClient(t)
	cases := []struct {
		name string
		in   jobframework.Integration
		obj  client.Object
		want []string // substrings of the error; none: accepted
	}{
		{"PyTorchJob without a Master", PyTorchJobIntegration,
			pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Worker": v1Spec(ptr.To[int32](2), "1")}),
			[]string{"spec.pytorchReplicaSpecs[Master]", "Required value"}},
		{"elastic PyTorchJob without a Master", PyTorchJobIntegration, func() client.Object {
			j := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Worker": v1Spec(ptr.To[int32](2), "1")})
			j.Spec.ElasticPolicy = &kftraining.ElasticPolicy{MinReplicas: ptr.To[int32](1)}
			return j
		}(), nil},
		{"PyTorchJob with two Masters", PyTorchJobIntegration,
			pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(ptr.To[int32](2), "1")}),
			[]string{"spec.pytorchReplicaSpecs[Master].replicas", "must be 1"}},
		{"PyTorchJob with an unknown replica type", PyTorchJobIntegration,
			pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1"), "Chief": v1Spec(nil, "1")}),
			[]string{"spec.pytorchReplicaSpecs[Chief]", "Unsupported value"}},
		{"PyTorchJob with a null replica spec", PyTorchJobIntegration,
			pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1"), "Worker": nil}),
			[]string{"spec.pytorchReplicaSpecs[Worker]", "must be set"}},
		{"PyTorchJob with negative workers", PyTorchJobIntegration,
			pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1"), "Worker": v1Spec(ptr.To[int32](-1), "1")}),
			[]string{"spec.pytorchReplicaSpecs[Worker].replicas", "must not be negative"}},
		{"good PyTorchJob", PyTorchJobIntegration,
			pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1"), "Worker": v1Spec(ptr.To[int32](3), "1")}), nil},
		{"TFJob without replica specs", TFJobIntegration, &kftraining.TFJob{ObjectMeta: meta()},
			[]string{"spec.tfReplicaSpecs", "at least one replica type"}},
		{"XGBoostJob without a Master", XGBoostJobIntegration, &kftraining.XGBoostJob{ObjectMeta: meta(), Spec: kftraining.XGBoostJobSpec{
			XGBReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Worker": v1Spec(nil, "1")}}},
			[]string{"spec.xgbReplicaSpecs[Master]"}},
		{"JAXJob with a Master", JAXJobIntegration, &kftraining.JAXJob{ObjectMeta: meta(), Spec: kftraining.JAXJobSpec{
			JAXReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1"), "Worker": v1Spec(nil, "1")}}},
			[]string{"spec.jaxReplicaSpecs[Master]", "Unsupported value"}},
		{"collective PaddleJob", PaddleJobIntegration, &kftraining.PaddleJob{ObjectMeta: meta(), Spec: kftraining.PaddleJobSpec{
			PaddleReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Worker": v1Spec(ptr.To[int32](2), "1")}}}, nil},
		{"MPIJob without a Launcher", MPIJobIntegration,
			mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Worker": {Replicas: ptr.To[int32](2), Template: podTemplate("1")}}),
			[]string{"spec.mpiReplicaSpecs[Launcher]", "Required value"}},
		{"MPIJob with two Launchers", MPIJobIntegration,
			mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Replicas: ptr.To[int32](2), Template: podTemplate("1")}}),
			[]string{"spec.mpiReplicaSpecs[Launcher].replicas", "must be 1"}},
	}
	for _, tc := range cases {
		err := webhookFor(c, tc.in, jobframework.Options{}).ValidateCreate(context.Background(), tc.obj)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want an error naming %s", tc.name, tc.want[0])
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}

// Jobs Kuota does not queue are the operator's business: their replica
// specs are not checked.
func TestWebhookLeavesUnmanagedJobsAlone(t *testing.T) {
	c := fakeClient(t)
	j := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Worker": v1Spec(nil, "1")})
	j.Labels = nil
	j.Namespace = "other"
	if err := webhookFor(c, PyTorchJobIntegration, jobframework.Options{}).ValidateCreate(context.Background(), j); err != nil {
		t.Fatalf("unmanaged PyTorchJob refused: %v", err)
	}
	if err := webhookFor(c, PyTorchJobIntegration, jobframework.Options{ManageJobsWithoutQueueName: true}).ValidateCreate(context.Background(), j); err == nil {
		t.Fatal("with manageJobsWithoutQueueName the job is managed and must be checked")
	}
}

// On create, a managed job is suspended through its run policy and sent
// to the namespace's default LocalQueue when it names none.
func TestWebhookSuspendsAndDefaultsTheQueue(t *testing.T) {
	c := fakeClient(t)
	mj := mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Template: podTemplate("1")}})
	mj.Labels = nil
	mj.Spec.RunPolicy.Suspend = nil
	if err := webhookFor(c, MPIJobIntegration, jobframework.Options{}).Default(context.Background(), mj); err != nil {
		t.Fatal(err)
	}
	if mj.Labels[jobframework.QueueNameLabel] != jobframework.DefaultLocalQueueName || !ptr.Deref(mj.Spec.RunPolicy.Suspend, false) {
		t.Fatalf("labels %v, suspend %v; want the default queue and suspended", mj.Labels, mj.Spec.RunPolicy.Suspend)
	}
}

// A user cannot resume a queued job whose Workload is not admitted.
func TestWebhookRefusesResumingAnUnadmittedJob(t *testing.T) {
	c := fakeClient(t)
	old := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1")})
	started := old.DeepCopy()
	started.Spec.RunPolicy.Suspend = ptr.To(false)
	err := webhookFor(c, PyTorchJobIntegration, jobframework.Options{}).ValidateUpdate(context.Background(), old, started)
	if err == nil || !strings.Contains(err.Error(), "is admitted") || !strings.Contains(err.Error(), "spec.runPolicy.suspend") {
		t.Fatalf("error %v, want resuming refused, naming spec.runPolicy.suspend", err)
	}
}
