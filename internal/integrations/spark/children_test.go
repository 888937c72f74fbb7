package spark

import (
	"context"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/pod"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The driver and executor pods of a queued SparkApplication are not queued
// by the pod integration on their own, even in a namespace with a
// "default" LocalQueue (which would queue any other pod there): the
// driver is controlled by the SparkApplication, and the executors,
// controlled by the driver, name the SparkApplication as an owner (the
// Spark operator puts it in their pod template for this). A pod owned by
// an application Kuota does not queue is left to the default queue.
func TestDriverAndExecutorPodsAreNotQueuedOnTheirOwn(t *testing.T) {
	app := newApp()
	app.UID = "app-uid"
	unqueued := newApp()
	unqueued.Name, unqueued.UID = "alone", "alone-uid"
	delete(unqueued.Labels, jobframework.QueueNameLabel)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, sparkv1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(app, unqueued,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}},
	).Build()
	w := &pod.Webhook{Client: c, Live: c, Options: jobframework.Options{Enabled: []jobframework.Integration{pod.Integration, Integration}}}

	appOwner := func(a *sparkv1beta2.SparkApplication, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: sparkv1beta2.GroupVersion.String(), Kind: "SparkApplication", Name: a.Name, UID: a.UID,
			Controller: ptr.To(controller)}
	}
	driverOwner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "pi-driver", UID: "driver-uid", Controller: ptr.To(true)}
	sparkPod := func(name, role string, owners ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners,
			Labels: map[string]string{"spark-role": role, "sparkoperator.k8s.io/launched-by-spark-operator": "true"}}}
	}

	for _, tc := range []struct {
		what  string
		pod   *corev1.Pod
		gated bool
	}{
		{"the driver", sparkPod("pi-driver", "driver", appOwner(app, true)), false},
		{"an executor", sparkPod("pi-exec-1", "executor", driverOwner, appOwner(app, false)), false},
		{"an executor of an application Kuota does not queue", sparkPod("alone-exec-1", "executor", driverOwner, appOwner(unqueued, false)), true},
	} {
		if err := w.Default(context.Background(), tc.pod); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if jobframework.IsGated(tc.pod) != tc.gated {
			t.Errorf("%s: gated %v, want %v", tc.what, jobframework.IsGated(tc.pod), tc.gated)
		}
	}
}
