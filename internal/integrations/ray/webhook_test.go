package ray

import (
	"context"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
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

func testClient(t testing.TB) client.Client {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, rayv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: jobframework.DefaultLocalQueueName}},
	).Build()
}

func testWebhook[T client.Object](c client.Client, in jobframework.Integration, check checkFunc) webhook[T] {
	opts := jobframework.Options{Enabled: []jobframework.Integration{RayJobIntegration, RayClusterIntegration, RayServiceIntegration}, ElasticJobs: true}
	return newWebhook[T](c, opts, in, check)
}

func rayJobWebhook(c client.Client) webhook[*rayv1.RayJob] {
	return testWebhook[*rayv1.RayJob](c, jobframework.Integration{Name: RayJobFramework, GVK: RayJobGVK, NewJob: NewRayJob, Elastic: true}, validateRayJob)
}

func rayClusterWebhook(c client.Client) webhook[*rayv1.RayCluster] {
	return testWebhook[*rayv1.RayCluster](c, jobframework.Integration{Name: RayClusterFramework, GVK: RayClusterGVK, NewJob: NewRayCluster, Elastic: true}, validateRayCluster)
}

func rayServiceWebhook(c client.Client) webhook[*rayv1.RayService] {
	return testWebhook[*rayv1.RayService](c, jobframework.Integration{Name: RayServiceFramework, GVK: RayServiceGVK, NewJob: NewRayService}, validateRayService)
}

func TestDefaultSuspendsAndSendsToDefaultQueue(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)

	j := newRayJob()
	j.Spec.Suspend = false
	delete(j.Labels, jobframework.QueueNameLabel)
	if err := rayJobWebhook(c).Default(ctx, j); err != nil {
		t.Fatal(err)
	}
	if !j.Spec.Suspend || j.Labels[jobframework.QueueNameLabel] != jobframework.DefaultLocalQueueName {
		t.Errorf("RayJob: suspend %v, queue %q; want suspended in the default queue", j.Spec.Suspend, j.Labels[jobframework.QueueNameLabel])
	}

	rc := newRayCluster()
	if err := rayClusterWebhook(c).Default(ctx, rc); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(rc.Spec.Suspend, false) {
		t.Error("a queued RayCluster was not suspended")
	}

	rs := newRayService()
	if err := rayServiceWebhook(c).Default(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(rs.Spec.RayClusterSpec.Suspend, false) {
		t.Error("a queued RayService was not suspended (spec.rayClusterConfig.suspend)")
	}

	// The cluster a RayJob creates carries its labels, but is the RayJob's.
	owned := newRayCluster()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "rj", UID: "u", Controller: ptr.To(true)}}
	owned.Spec.EnableInTreeAutoscaling = ptr.To(true)
	if err := rayClusterWebhook(c).Default(ctx, owned); err != nil {
		t.Fatal(err)
	}
	if owned.Spec.Suspend != nil {
		t.Error("the RayCluster of a RayJob was suspended")
	}
	if _, err := rayClusterWebhook(c).ValidateCreate(ctx, owned); err != nil {
		t.Errorf("the RayCluster of a RayJob was refused: %v", err)
	}

	// Without the RayJob integration, nothing else holds its quota: the
	// RayCluster is queued on its own.
	alone := rayClusterWebhook(c)
	alone.opts.Enabled = []jobframework.Integration{RayClusterIntegration}
	alone.w.Options = alone.opts
	orphan := newRayCluster()
	orphan.OwnerReferences = owned.OwnerReferences
	if err := alone.Default(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(orphan.Spec.Suspend, false) {
		t.Error("the RayCluster of a RayJob was not suspended while the RayJob integration is off")
	}
}

func TestValidate(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	cases := []struct {
		name   string
		mutate func(*rayv1.RayJob)
		want   []string
	}{
		{name: "valid", mutate: func(*rayv1.RayJob) {}},
		{name: "autoscaling", mutate: func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true) },
			want: []string{"spec.rayClusterSpec.enableInTreeAutoscaling"}},
		{name: "existing cluster", mutate: func(j *rayv1.RayJob) { j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "x"} },
			want: []string{"spec.clusterSelector"}},
		{name: "cluster kept", mutate: func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = false },
			want: []string{"spec.shutdownAfterJobFinishes"}},
		{name: "no cluster spec", mutate: func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil }, want: []string{"spec.rayClusterSpec"}},
		{name: "duplicate group", mutate: func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.WorkerGroupSpecs[1].GroupName = "SMALL" },
			want: []string{"spec.rayClusterSpec.workerGroupSpecs[1].groupName"}},
		{name: "group named head", mutate: func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.WorkerGroupSpecs[0].GroupName = "head" },
			want: []string{"spec.rayClusterSpec.workerGroupSpecs[0].groupName"}},
		{name: "bad group name", mutate: func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.WorkerGroupSpecs[0].GroupName = "gpu_a" },
			want: []string{"spec.rayClusterSpec.workerGroupSpecs[0].groupName"}},
		{name: "negative replicas", mutate: func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](-1) },
			want: []string{"spec.rayClusterSpec.workerGroupSpecs[0].replicas"}},
		{name: "too many groups with the submitter", mutate: func(j *rayv1.RayJob) {
			for i := 2; i < 7; i++ {
				j.Spec.RayClusterSpec.WorkerGroupSpecs = append(j.Spec.RayClusterSpec.WorkerGroupSpecs,
					rayv1.WorkerGroupSpec{GroupName: "g" + string(rune('0'+i)), Template: podTemplateWith("1")})
			}
		}, want: []string{"spec.rayClusterSpec.workerGroupSpecs: Too many: 7"}},
		{name: "seven groups without the submitter", mutate: func(j *rayv1.RayJob) {
			j.Spec.SubmissionMode = rayv1.HTTPMode
			for i := 2; i < 7; i++ {
				j.Spec.RayClusterSpec.WorkerGroupSpecs = append(j.Spec.RayClusterSpec.WorkerGroupSpecs,
					rayv1.WorkerGroupSpec{GroupName: "g" + string(rune('0'+i)), Template: podTemplateWith("1")})
			}
		}},
		{name: "bad queue label", mutate: func(j *rayv1.RayJob) { j.Labels[jobframework.MaxExecTimeSecondsLabel] = "-3" },
			want: []string{"metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newRayJob()
			tc.mutate(j)
			_, err := rayJobWebhook(c).ValidateCreate(ctx, j)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error naming %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}

	// An unqueued RayJob is not Kuota's to check.
	j := newRayJob()
	delete(j.Labels, jobframework.QueueNameLabel)
	j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "x"}
	if _, err := rayJobWebhook(c).ValidateCreate(ctx, j); err != nil {
		t.Errorf("an unqueued RayJob was refused: %v", err)
	}

	rc := newRayCluster()
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	if _, err := rayClusterWebhook(c).ValidateCreate(ctx, rc); err == nil || !strings.Contains(err.Error(), "spec.enableInTreeAutoscaling") {
		t.Errorf("autoscaling RayCluster: got %v, want an error naming spec.enableInTreeAutoscaling", err)
	}
	rs := newRayService()
	rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].GroupName = ""
	if _, err := rayServiceWebhook(c).ValidateCreate(ctx, rs); err == nil || !strings.Contains(err.Error(), "spec.rayClusterConfig.workerGroupSpecs[0].groupName") {
		t.Errorf("RayService without a group name: got %v, want an error naming spec.rayClusterConfig.workerGroupSpecs[0].groupName", err)
	}
}

func TestValidateUpdateRefusesUnadmittedStart(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	oldJob := newRayJob()
	newJob := oldJob.DeepCopy()
	newJob.Spec.Suspend = false
	if _, err := rayJobWebhook(c).ValidateUpdate(ctx, oldJob, newJob); err == nil || !strings.Contains(err.Error(), "spec.suspend") {
		t.Errorf("starting an unadmitted RayJob: got %v, want an error naming spec.suspend", err)
	}
	oldC := newRayCluster()
	oldC.Spec.Suspend = ptr.To(true)
	newC := oldC.DeepCopy()
	newC.Spec.Suspend = ptr.To(false)
	if _, err := rayClusterWebhook(c).ValidateUpdate(ctx, oldC, newC); err == nil {
		t.Error("starting an unadmitted RayCluster was accepted")
	}
}
