package kubeflow

import (
	"testing"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"k8s.io/utils/ptr"
)

func TestPodIndexAndTemplatePath(t *testing.T) {
	job := PyTorchJobIntegration.NewJob(pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
		"Master": v1Spec(ptr.To[int32](1), "1"), "Worker": v1Spec(ptr.To[int32](4), "1"),
	})).(*Job)
	ps, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if ix := job.PodIndex(&ps[1]); ix.Label != kftraining.ReplicaIndexLabel {
		t.Errorf("index %+v, want %s", ix, kftraining.ReplicaIndexLabel)
	}
	if p := job.TemplatePath("worker"); p == nil || p.String() != "spec.pytorchReplicaSpecs[Worker].template" {
		t.Errorf("template path %v", p)
	}
}
