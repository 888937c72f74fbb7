package jobset

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FuzzJobSetWebhook runs arbitrary JobSet JSON through the webhook's whole
// path: decode, default, validate on create, validate an update that
// starts the JobSet and one that changes it while it runs, and describe it
// as PodSets. Bad input must give errors, never a panic.
func FuzzJobSetWebhook(f *testing.F) {
	seed := newJobSet()
	seed.Labels[jobframework.PriorityClassLabel] = "high"
	for _, js := range []*jobsetapi.JobSet{seed, {}} {
		data, err := json.Marshal(js)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"A_B","kueue.x-k8s.io/max-exec-time-seconds":"0"}},"spec":{"replicatedJobs":[{"name":"w","replicas":-3,"template":{"spec":{"parallelism":-1,"completions":0}}}]}}`))
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"suspend":false,"replicatedJobs":[{"name":"a"},{"name":"a"}]}}`))

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
	w := &jobframework.Webhook{Client: c, Integration: jobframework.Integration{Name: FrameworkName, GVK: GVK, NewJob: New}, Validate: Validate}
	f.Fuzz(func(t *testing.T, data []byte) {
		var js jobsetapi.JobSet
		if json.Unmarshal(data, &js) != nil {
			return
		}
		js.Namespace = "ns"
		ctx := context.Background()
		if err := w.Default(ctx, &js); err != nil {
			return
		}
		if !ptr.Deref(js.Spec.Suspend, false) {
			t.Fatal("a JobSet sent to the default LocalQueue must be suspended")
		}
		_ = w.ValidateCreate(ctx, &js)
		started := js.DeepCopy()
		started.Spec.Suspend = ptr.To(false)
		_ = w.ValidateUpdate(ctx, &js, started)
		changed := started.DeepCopy()
		for i := range changed.Spec.ReplicatedJobs {
			changed.Spec.ReplicatedJobs[i].Replicas++
		}
		if err := w.ValidateUpdate(ctx, started, changed); len(changed.Spec.ReplicatedJobs) > 0 && err == nil {
			t.Fatal("changing the replicas of a running queued JobSet must be refused")
		}
		_, _ = New(&js).PodSets()
	})
}
