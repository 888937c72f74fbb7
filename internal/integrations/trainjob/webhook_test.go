package trainjob

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func fakeClient(t testing.TB) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}},
	).Build()
}

// A new TrainJob is suspended; one without a queue name is sent to the
// namespace's default LocalQueue.
func TestWebhookSuspendsAndDefaultsTheQueue(t *testing.T) {
	w := NewWebhook(fakeClient(t), jobframework.Options{})
	u := trainJob(t, `{"runtimeRef":{"name":"torch"}}`)
	u.SetLabels(nil)
	if err := w.Default(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if u.GetLabels()[jobframework.QueueNameLabel] != jobframework.DefaultLocalQueueName || !New(u).IsSuspended() {
		t.Errorf("labels %v, spec %v: want the default queue and suspended", u.GetLabels(), u.Object["spec"])
	}
}

// Bad input is refused with an error naming the field.
func TestWebhookNamesTheBadField(t *testing.T) {
	w := NewWebhook(fakeClient(t), jobframework.Options{})
	for spec, field := range map[string]string{
		`{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":"two"}}`:                  "spec.trainer.numNodes",
		`{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":0}}`:                      "spec.trainer.numNodes",
		`{"runtimeRef":{"name":"torch"},"trainer":{"resourcesPerNode":{"requests":7}}}`: "spec.trainer.resourcesPerNode",
		`{"runtimeRef":{"name":"torch","kind":"MyRuntime"}}`:                            "spec.runtimeRef",
		`{"runtimeRef":{"name":"torch","apiGroup":"example.com"}}`:                      "spec.runtimeRef",
		`{"runtimeRef":{"name":"torch"},"suspend":"yes"}`:                               "spec.suspend",
		`{"runtimeRef":{"name":"torch"},"runtimePatches":[{"trainingRuntimeSpec":{}}]}`: "spec.runtimePatches[0].manager",
		`{"runtimeRef":{"name":"torch"},"runtimePatches":{"a":1}}`:                      "spec.runtimePatches",
	} {
		err := w.ValidateCreate(context.Background(), trainJob(t, spec))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming %s", spec, err, field)
		}
	}
	if err := w.ValidateCreate(context.Background(), trainJob(t, `{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":3}}`)); err != nil {
		t.Errorf("a valid TrainJob refused: %v", err)
	}
}

// A user cannot start a queued TrainJob whose Workload is not admitted.
func TestWebhookRefusesAnUnadmittedStart(t *testing.T) {
	w := NewWebhook(fakeClient(t), jobframework.Options{})
	old := trainJob(t, `{"suspend":true,"runtimeRef":{"name":"torch"}}`)
	started := trainJob(t, `{"suspend":false,"runtimeRef":{"name":"torch"}}`)
	if err := w.ValidateUpdate(context.Background(), old, started); err == nil || !strings.Contains(err.Error(), "spec.suspend") {
		t.Errorf("error %v, want a refusal naming spec.suspend", err)
	}
}
