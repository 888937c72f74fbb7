package batchjob

import (
	"context"
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FuzzJobWebhook runs arbitrary Job JSON through the webhook's whole path:
// decode, default, validate on create, and validate an update that starts
// the job. Bad input must give errors, never a panic.
func FuzzJobWebhook(f *testing.F) {
	seed := newJob(ptr.To[int32](3), ptr.To[int32](6))
	seed.Labels = map[string]string{jobframework.QueueNameLabel: "lq", jobframework.PriorityClassLabel: "high"}
	seed.Annotations[MinParallelismAnnotation] = "2"
	for _, j := range []*batchv1.Job{seed, newJob(nil, nil), {}} {
		data, err := json.Marshal(j)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"A_B","kueue.x-k8s.io/max-exec-time-seconds":"-1"}},"spec":{"parallelism":-5,"completions":0}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"kueue.x-k8s.io/job-min-parallelism":"99999999999"}}}`))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}},
	).Build()
	w := &jobframework.Webhook{Client: c, Integration: jobframework.Integration{Name: "batch/job", GVK: GVK, NewJob: New}, Validate: validate}
	f.Fuzz(func(t *testing.T, data []byte) {
		var j batchv1.Job
		if json.Unmarshal(data, &j) != nil {
			return
		}
		j.Namespace = "ns"
		ctx := context.Background()
		if err := w.Default(ctx, &j); err != nil {
			return
		}
		_ = w.ValidateCreate(ctx, &j)
		started := j.DeepCopy()
		started.Spec.Suspend = ptr.To(false)
		_ = w.ValidateUpdate(ctx, &j, started)
	})
}
