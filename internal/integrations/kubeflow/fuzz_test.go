package kubeflow

import (
	"context"
	"encoding/json"
	"testing"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FuzzKubeflowWebhooks runs arbitrary JSON, as any of the six kinds,
// through the webhook's whole path (default, validate on create, validate
// an update that resumes the job) and through the adapter (PodSets, run
// with an admission of those PodSets, restore). Bad input must give
// errors, never a panic.
func FuzzKubeflowWebhooks(f *testing.F) {
	seeds := []any{
		pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(nil, "1"), "Worker": v1Spec(ptr.To[int32](3), "2")}),
		mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Template: podTemplate("1")}, "Worker": {Replicas: ptr.To[int32](2), Template: podTemplate("1")}}),
	}
	for _, s := range seeds {
		data, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		for kind := range 6 {
			f.Add(uint8(kind), data)
		}
	}
	f.Add(uint8(1), []byte(`{"spec":{"tfReplicaSpecs":{"Chief":null,"PS":{"replicas":-3}}}}`))
	f.Add(uint8(5), []byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"A_B"}},"spec":{"mpiReplicaSpecs":{"Worker":{}}}}`))

	c := fakeClient(f)
	kinds := []jobframework.Integration{PyTorchJobIntegration, TFJobIntegration, XGBoostJobIntegration,
		PaddleJobIntegration, JAXJobIntegration, MPIJobIntegration}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		in := kinds[int(kind)%len(kinds)]
		job := in.NewJob(nil)
		obj := job.Object()
		if json.Unmarshal(data, obj) != nil {
			return
		}
		obj.SetNamespace("ns")
		ctx := context.Background()
		w := webhookFor(c, in, jobframework.Options{})
		if err := w.Default(ctx, obj); err != nil {
			return
		}
		_ = w.ValidateCreate(ctx, obj)
		ps, err := job.PodSets()
		if err != nil {
			return
		}
		before := obj.DeepCopyObject().(client.Object)
		infos := make([]jobframework.PodSetInfo, 0, len(ps))
		for _, p := range ps {
			infos = append(infos, jobframework.PodSetInfo{Name: p.Name, Count: p.Count, NodeSelector: map[string]string{"pool": "fuzz"},
				Labels: map[string]string{jobframework.PodSetLabel: string(p.Name)}})
		}
		if job.RunWithPodSetsInfo(infos) != nil {
			return // a template that selects another pool conflicts with the flavor
		}
		_ = w.ValidateUpdate(ctx, before, obj)
		job.Suspend()
		job.RestorePodSetsInfo(jobframework.RestoreInfos(&kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}}))
		again, err := job.PodSets()
		if err != nil || !jobframework.EquivalentPodSets(ps, again) {
			t.Fatalf("after run and restore the PodSets changed: %v (%v), were %v", again, err, ps)
		}
	})
}
