package spark

import (
	"context"
	"encoding/json"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	"k8s.io/utils/ptr"
)

// FuzzSparkApplicationWebhook runs arbitrary JSON, read as a
// SparkApplication, through the webhook's whole path: decode, default,
// validate on create, validate an update that starts it, and, for what was
// accepted, the PodSets, an admission and restoring. Bad input must give
// errors, never a panic, and an accepted application must have PodSets.
func FuzzSparkApplicationWebhook(f *testing.F) {
	for _, app := range []*sparkv1beta2.SparkApplication{newApp(), {}} {
		data, err := json.Marshal(app)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"type":"Python","memoryOverheadFactor":"1e308","driver":{"memory":"9223372036854775807p","coreRequest":"-1"},"executor":{"instances":-3,"gpu":{"name":"","quantity":-1}},"sparkConf":{"spark.executor.instances":"x","spark.memory.offHeap.enabled":"true","spark.memory.offHeap.size":"1zb"}}}`))
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"nodeSelector":{"a":"b"},"driver":{"template":{"spec":{"containers":[]}},"volumeMounts":[{"name":"v"}]},"volumes":[{"name":"v"}],"executor":{"sidecars":[{"name":"s"}],"tolerations":[{"key":"k"}]}}}`))

	w := testWebhook(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		var app sparkv1beta2.SparkApplication
		if json.Unmarshal(data, &app) != nil {
			return
		}
		app.Namespace = "ns"
		if w.Default(ctx, &app) != nil {
			return
		}
		started := app.DeepCopy()
		started.Spec.Suspend = ptr.To(false)
		_ = w.ValidateUpdate(ctx, &app, started)
		if w.ValidateCreate(ctx, &app) != nil || app.Labels["kueue.x-k8s.io/queue-name"] == "" {
			return
		}
		job := New(&app)
		podSets, err := job.PodSets()
		if err != nil {
			t.Fatalf("an accepted application has no PodSets: %v", err)
		}
		if job.RunWithPodSetsInfo(admission(podSets)) == nil {
			job.Suspend()
			job.RestorePodSetsInfo(restoreInfos(podSets))
		}
	})
}
