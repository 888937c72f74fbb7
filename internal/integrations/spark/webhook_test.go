package spark

import (
	"context"
	"strings"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
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

func testWebhook(t testing.TB) *jobframework.Webhook {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, sparkv1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}},
	).Build()
	return &jobframework.Webhook{Client: c, Integration: jobframework.Integration{Name: FrameworkName, GVK: GVK, NewJob: New},
		Options: jobframework.Options{Enabled: []jobframework.Integration{Integration}}, Validate: Validate}
}

func TestDefaultSuspendsAndSendsToTheDefaultQueue(t *testing.T) {
	app := newApp()
	app.Spec.Suspend = nil
	delete(app.Labels, jobframework.QueueNameLabel)
	if err := testWebhook(t).Default(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(app.Spec.Suspend, false) || app.Labels[jobframework.QueueNameLabel] != jobframework.DefaultLocalQueueName {
		t.Errorf("suspend %v queue %q, want suspended in the default LocalQueue", app.Spec.Suspend, app.Labels[jobframework.QueueNameLabel])
	}
}

// wantRefused checks that err names the field.
func wantRefused(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), field) {
		t.Errorf("error %v, want one naming %s", err, field)
	}
}

func TestBadApplicationsAreRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	w := testWebhook(t)
	for field, mutate := range map[string]func(*sparkv1beta2.SparkApplication){
		"spec.dynamicAllocation.enabled": func(a *sparkv1beta2.SparkApplication) {
			a.Spec.DynamicAllocation = &sparkv1beta2.DynamicAllocation{Enabled: true, MaxExecutors: ptr.To[int32](10)}
		},
		"spec.sparkConf[spark.dynamicAllocation.enabled]": func(a *sparkv1beta2.SparkApplication) {
			a.Spec.SparkConf = map[string]string{"spark.dynamicAllocation.enabled": "true"}
		},
		"spec.executor.memory":    func(a *sparkv1beta2.SparkApplication) { a.Spec.Executor.Memory = ptr.To("a lot") },
		"spec.driver.memoryLimit": func(a *sparkv1beta2.SparkApplication) { a.Spec.Driver.MemoryLimit = ptr.To("?") },
		"spec.executor.instances": func(a *sparkv1beta2.SparkApplication) { a.Spec.Executor.Instances = ptr.To[int32](-1) },
		"metadata.labels[kueue.x-k8s.io/queue-name]": func(a *sparkv1beta2.SparkApplication) {
			a.Labels[jobframework.QueueNameLabel] = "Not A Queue"
		},
	} {
		app := newApp()
		mutate(app)
		wantRefused(t, w.ValidateCreate(ctx, app), field)
	}

	unqueued := newApp()
	delete(unqueued.Labels, jobframework.QueueNameLabel)
	unqueued.Spec.DynamicAllocation = &sparkv1beta2.DynamicAllocation{Enabled: true}
	if err := w.ValidateCreate(ctx, unqueued); err != nil {
		t.Errorf("an application Kuota does not queue was refused: %v", err)
	}
	if err := w.ValidateCreate(ctx, newApp()); err != nil {
		t.Errorf("a good application was refused: %v", err)
	}
}

func TestUpdatesOfARunningApplication(t *testing.T) {
	ctx := context.Background()
	w := testWebhook(t)

	suspended := newApp()
	started := suspended.DeepCopy()
	started.Spec.Suspend = ptr.To(false)
	wantRefused(t, w.ValidateUpdate(ctx, suspended, started), "spec.suspend")

	running := newApp()
	running.Spec.Suspend = ptr.To(false)
	more := running.DeepCopy()
	more.Spec.Executor.Instances = ptr.To[int32](10)
	wantRefused(t, w.ValidateUpdate(ctx, running, more), "spec.executor.instances")

	bigger := running.DeepCopy()
	bigger.Spec.Driver.Memory = ptr.To("64g")
	wantRefused(t, w.ValidateUpdate(ctx, running, bigger), "spec.driver")

	requeued := running.DeepCopy()
	requeued.Labels[jobframework.QueueNameLabel] = "other"
	wantRefused(t, w.ValidateUpdate(ctx, running, requeued), "kueue.x-k8s.io/queue-name")

	unqueued := running.DeepCopy()
	delete(unqueued.Labels, jobframework.QueueNameLabel)
	wantRefused(t, w.ValidateUpdate(ctx, running, unqueued), "kueue.x-k8s.io/queue-name")

	held := newApp()
	resized := held.DeepCopy()
	resized.Spec.Executor.Instances = ptr.To[int32](10)
	if err := w.ValidateUpdate(ctx, held, resized); err != nil {
		t.Errorf("resizing a suspended application was refused: %v", err)
	}
}

var _ client.Object = (*sparkv1beta2.SparkApplication)(nil)
