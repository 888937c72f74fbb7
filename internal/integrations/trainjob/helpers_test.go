package trainjob

import (
	"context"
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objects is a client.Reader over a few unstructured objects.
type objects []*unstructured.Unstructured

func (o objects) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u := obj.(*unstructured.Unstructured)
	for _, x := range o {
		if x.GroupVersionKind() == u.GroupVersionKind() && x.GetNamespace() == key.Namespace && x.GetName() == key.Name {
			x.DeepCopyInto(u)
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: u.GetKind()}, key.Name)
}

func (o objects) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ul := list.(*unstructured.UnstructuredList)
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	for _, x := range o {
		if x.GetKind()+"List" == ul.GetKind() && (lo.Namespace == "" || lo.Namespace == x.GetNamespace()) {
			ul.Items = append(ul.Items, *x.DeepCopy())
		}
	}
	return nil
}

// parse builds an unstructured object from JSON, as the API server's
// client decodes it (whole numbers as int64).
func parse(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatalf("parsing %s: %v", s, err)
	}
	return u
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// torchRuntime is a ClusterTrainingRuntime shaped like the trainer's
// torch-distributed one with both initializers, plus an evaluator job
// that is none of the trainer's steps.
const torchRuntime = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime","metadata":{"name":"torch"},
"spec":{"mlPolicy":{"numNodes":2,"torch":{}},"template":{"spec":{"replicatedJobs":[
 {"name":"dataset-initializer","replicas":1,"template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"dataset-initializer"}},
  "spec":{"template":{"spec":{"containers":[{"name":"dataset-initializer","image":"d","resources":{"requests":{"cpu":"1"}}}]}}}}},
 {"name":"model-initializer","replicas":1,"template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"model-initializer"}},
  "spec":{"template":{"spec":{"containers":[{"name":"model-initializer","image":"m","resources":{"requests":{"cpu":"1"}}}]}}}}},
 {"name":"node","replicas":1,"template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"trainer"}},
  "spec":{"template":{"spec":{"tolerations":[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}],
   "containers":[{"name":"node","image":"t","resources":{"requests":{"cpu":"2","memory":"1Gi"}}}]}}}}},
 {"name":"evaluator","replicas":2,"template":{"spec":{"parallelism":3,"template":{"spec":{"containers":[{"name":"e","image":"e","resources":{"requests":{"cpu":"1"}}}]}}}}}
]}}}}`

func trainJob(t testing.TB, spec string) *unstructured.Unstructured {
	return parse(t, `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"tj","namespace":"ns","labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":`+spec+`}`)
}

// loaded wraps a TrainJob and reads its runtime from objs.
func loaded(t testing.TB, u *unstructured.Unstructured, objs ...*unstructured.Unstructured) *TrainJob {
	t.Helper()
	job := New(u).(*TrainJob)
	if err := job.LoadPrerequisites(context.Background(), objects(objs)); err != nil {
		t.Fatal(err)
	}
	return job
}
