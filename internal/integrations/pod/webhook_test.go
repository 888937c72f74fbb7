package pod

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
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

func testWebhook(t testing.TB, objs ...client.Object) *Webhook {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	job := jobframework.Integration{Name: "batch/job", GVK: batchv1.SchemeGroupVersion.WithKind("Job"),
		NewJob: func(client.Object) jobframework.Job { return nil }}
	return &Webhook{Client: c, Live: c, Options: jobframework.Options{Enabled: []jobframework.Integration{Integration, job}}}
}

func TestDefaultGatesQueuedPods(t *testing.T) {
	w := testWebhook(t)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{
		jobframework.QueueNameLabel: "lq", jobframework.PodGroupNameLabel: "g"}}}
	if err := w.Default(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if !jobframework.IsGated(p) || p.Labels[jobframework.ManagedLabel] != "true" || p.Finalizers[0] != jobframework.PodFinalizer ||
		p.Annotations[jobframework.RoleHashAnnotation] == "" {
		t.Errorf("pod after defaulting: %+v", p.ObjectMeta)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"}}
	if err := w.Default(context.Background(), plain); err != nil || jobframework.IsGated(plain) {
		t.Errorf("a pod without a queue name must be left alone (%v)", err)
	}
}

func TestDefaultLeavesManagedJobsPods(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "ju", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}}}
	w := testWebhook(t, job)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-1", Labels: map[string]string{jobframework.QueueNameLabel: "lq"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "ju", Controller: ptr.To(true)}}}}
	if err := w.Default(context.Background(), p); err != nil || jobframework.IsGated(p) {
		t.Errorf("a managed Job's pod is the Job's business (%v, gates %v)", err, p.Spec.SchedulingGates)
	}
}

func TestValidateGroupMetadata(t *testing.T) {
	w := testWebhook(t)
	cases := map[string]struct {
		labels, annotations map[string]string
		want                string
	}{
		"count without group": {nil, map[string]string{jobframework.PodGroupTotalCountAnnotation: "2"}, jobframework.PodGroupNameLabel},
		"group without count": {map[string]string{jobframework.PodGroupNameLabel: "g"}, nil, jobframework.PodGroupTotalCountAnnotation},
		"bad count":           {map[string]string{jobframework.PodGroupNameLabel: "g"}, map[string]string{jobframework.PodGroupTotalCountAnnotation: "-1"}, "positive"},
		"bad group name":      {map[string]string{jobframework.PodGroupNameLabel: "G_1"}, map[string]string{jobframework.PodGroupTotalCountAnnotation: "1"}, jobframework.PodGroupNameLabel},
		"bad managed label":   {map[string]string{jobframework.ManagedLabel: "yes"}, nil, jobframework.ManagedLabel},
	}
	for name, tc := range cases {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: tc.labels, Annotations: tc.annotations}}
		if _, err := w.ValidateCreate(context.Background(), p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tc.want)
		}
	}
}

func TestValidateUpdateRules(t *testing.T) {
	w := testWebhook(t)
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{
		jobframework.QueueNameLabel: "a", jobframework.ManagedLabel: "true"}}}
	jobframework.Gate(old)
	moved := old.DeepCopy()
	moved.Labels[jobframework.QueueNameLabel] = "b"
	if _, err := w.ValidateUpdate(context.Background(), old, moved); err != nil {
		t.Errorf("a waiting pod may change queue: %v", err)
	}
	started := old.DeepCopy()
	jobframework.Ungate(started)
	if _, err := w.ValidateUpdate(context.Background(), old, started); err == nil || !strings.Contains(err.Error(), "schedulingGates") {
		t.Errorf("lifting the gate without an admission: %v, want a refusal", err)
	}
	running := started.DeepCopy()
	running.Labels[jobframework.QueueNameLabel] = "b"
	if _, err := w.ValidateUpdate(context.Background(), started, running); err == nil {
		t.Error("a running pod may not change queue")
	}
}

func TestWebhookPathsMatchTheManifests(t *testing.T) {
	if got := jobframework.WebhookPath("mutate", GVK); got != "/mutate--v1-pod" {
		t.Errorf("mutate path %q", got)
	}
}

// FuzzPodWebhook runs arbitrary pod JSON through the webhook: default,
// validate on create, and validate an update that lifts the gate and
// changes the queue. Bad input must give errors, never a panic.
func FuzzPodWebhook(f *testing.F) {
	seed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{
		jobframework.QueueNameLabel: "lq", jobframework.PodGroupNameLabel: "g"},
		Annotations: map[string]string{jobframework.PodGroupTotalCountAnnotation: "3", jobframework.RetriableInGroupAnnotation: "false"}}}
	for _, p := range []*corev1.Pod{seed, {}} {
		data, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/pod-group-name":"A_B","kueue.x-k8s.io/managed":"no"},"annotations":{"kueue.x-k8s.io/pod-group-total-count":"99999999999"}}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"kueue.x-k8s.io/pod-suspending-parent":"statefulset"}}}`))
	w := testWebhook(f, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}})
	f.Fuzz(func(t *testing.T, data []byte) {
		var p corev1.Pod
		if json.Unmarshal(data, &p) != nil {
			return
		}
		p.Namespace = "ns"
		ctx := context.Background()
		if err := w.Default(ctx, &p); err != nil {
			return
		}
		_, _ = w.ValidateCreate(ctx, &p)
		next := p.DeepCopy()
		jobframework.Ungate(next)
		if next.Labels == nil {
			next.Labels = map[string]string{}
		}
		next.Labels[jobframework.QueueNameLabel] = "other"
		_, _ = w.ValidateUpdate(ctx, &p, next)
	})
}

// A pod MultiKueue copies into a worker is managed as it is: its parent
// (here a kind whose completion fails, as a LeaderWorkerSet's does when
// the object is not in the cluster) is not asked to complete it again.
func TestDefaultManagesAWorkerCopyWithoutItsParent(t *testing.T) {
	w := testWebhook(t)
	parent := jobframework.Integration{Name: "example.com/set", DefaultPod: func(context.Context, client.Reader, *corev1.Pod) (bool, error) {
		return false, errors.New("the parent is not in this cluster")
	}}
	w.Options.Enabled = append(w.Options.Enabled, parent)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "set-0",
		Labels: map[string]string{jobframework.MultiKueueWorkerPodLabel: "true", jobframework.PrebuiltWorkloadLabel: "wl",
			jobframework.PodGroupNameLabel: "wl"},
		Annotations: map[string]string{jobframework.SuspendingParentAnnotation: parent.Name, jobframework.RoleHashAnnotation: "main"}}}
	if err := w.Default(context.Background(), p); err != nil {
		t.Fatalf("the worker's copy was refused: %v", err)
	}
	if !jobframework.IsGated(p) || p.Labels[jobframework.ManagedLabel] != "true" {
		t.Errorf("the copy is not managed: %+v", p.ObjectMeta)
	}
	manager := p.DeepCopy()
	delete(manager.Labels, jobframework.MultiKueueWorkerPodLabel)
	if err := w.Default(context.Background(), manager); err == nil {
		t.Error("the manager's pod was not completed by its parent")
	}
}
