package appwrapper

import (
	"context"
	"encoding/json"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FuzzAppWrapperWebhook runs arbitrary AppWrapper JSON through the
// webhook's whole path: decode, default, validate on create, validate an
// update that starts it and one that changes its components while it
// runs, describe it as PodSets and admit it. Bad input must give errors,
// never a panic.
func FuzzAppWrapperWebhook(f *testing.F) {
	seed, err := json.Marshal(newAppWrapper(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"metadata":{"name":"x","labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"components":[{"podSets":[{"path":"template[0].spec","replicas":-2}],"template":{"kind":"Pod","apiVersion":"v1","spec":{"containers":[{}]}}}]}}`))
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"suspend":false,"components":[{"template":{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":"x","template":{"spec":{}}}}}]}}`))

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
		var aw awv1beta2.AppWrapper
		if json.Unmarshal(data, &aw) != nil {
			return
		}
		aw.Namespace = "ns"
		ctx := context.Background()
		if err := w.Default(ctx, &aw); err != nil {
			return
		}
		if !aw.Spec.Suspend {
			t.Fatal("an AppWrapper sent to the default LocalQueue must be suspended")
		}
		_ = w.ValidateCreate(ctx, &aw)
		started := aw.DeepCopy()
		started.Spec.Suspend = false
		_ = w.ValidateUpdate(ctx, &aw, started)
		changed := started.DeepCopy()
		changed.Spec.Components = append(changed.Spec.Components, awv1beta2.AppWrapperComponent{})
		if err := w.ValidateUpdate(ctx, started, changed); err == nil {
			t.Fatal("adding a component to a running queued AppWrapper must be refused")
		}
		job := New(&aw)
		if ps, err := job.PodSets(); err == nil {
			infos := make([]jobframework.PodSetInfo, len(ps))
			for i := range ps {
				infos[i] = jobframework.PodSetInfo{Name: ps[i].Name, NodeSelector: map[string]string{"pool": "a"}}
			}
			if err := job.RunWithPodSetsInfo(infos); err != nil {
				t.Fatalf("admitting the AppWrapper's own PodSets: %v", err)
			}
		}
	})
}
