package trainjob

import (
	"context"
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FuzzTrainJobWebhook runs arbitrary TrainJob JSON (decoded as the
// webhook decodes it, numbers as float64) through the webhook and the
// whole Job contract: default, validate on create and on a start, read
// the runtime, PodSets, run, restore. Bad input must give errors, never a
// panic, and a refusal must be an Invalid error whose causes name fields.
func FuzzTrainJobWebhook(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"tj","labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":3,"resourcesPerNode":{"requests":{"cpu":"2"}}}}}`))
	f.Add([]byte(`{"spec":{"runtimeRef":{"name":"torch","kind":"TrainingRuntime"},"runtimePatches":[{"manager":"a","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"a":"b"}}}}}}]}}}}]}}`))
	f.Add([]byte(`{"spec":{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":1e20},"suspend":1,"runtimePatches":[1,{"manager":5}]},"status":{"jobsStatus":[{"name":"node","active":"x"}],"conditions":[7]}}`))
	f.Add([]byte(`{"spec":[],"status":"x"}`))
	c := fakeClient(f)
	w := NewWebhook(c, jobframework.Options{})
	runtimes := objects{parse(f, torchRuntime)}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(GVK)
		u.SetNamespace("ns")
		ctx := context.Background()
		_ = w.Default(ctx, u)
		checkInvalid(t, w.ValidateCreate(ctx, u))
		started := u.DeepCopy()
		setAt(started, false, suspendPath)
		checkInvalid(t, w.ValidateUpdate(ctx, u, started))

		job := New(u.DeepCopy()).(*TrainJob)
		if err := job.LoadPrerequisites(ctx, runtimes); err != nil {
			t.Fatalf("reading from a fixed set of objects failed: %v", err)
		}
		ps, err := job.PodSets()
		if err != nil {
			return
		}
		var infos []jobframework.PodSetInfo
		for _, p := range ps {
			infos = append(infos, jobframework.PodSetInfo{Name: p.Name, Count: p.Count, NodeSelector: map[string]string{"pool": "f"}})
		}
		_ = job.PodsReady()
		_ = job.ReclaimablePods()
		_ = job.IsActive()
		_, _, _ = job.Finished()
		if err := job.RunWithPodSetsInfo(infos); err != nil {
			return
		}
		if job.IsSuspended() {
			t.Fatal("started but still suspended")
		}
		if !job.RestorePodSetsInfo(nil) {
			t.Fatal("restoring after a start changed nothing")
		}
	})
}

func checkInvalid(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	st, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsInvalid(err) {
		t.Fatalf("refusal %v is not an Invalid error", err)
	}
	for _, c := range st.Status().Details.Causes {
		if c.Field == "" {
			t.Fatalf("refusal %v has a cause without a field", err)
		}
	}
}
