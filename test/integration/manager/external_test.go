package manager

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/integrations/pod"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// pipelineCRD is an external framework's kind, as a user's own operator
// (a pipeline engine, say) would install it.
func pipelineCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "pipelines.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "pipelines", Singular: "pipeline", Kind: "Pipeline", ListKind: "PipelineList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// An external framework's controller creates the Workload of its own
// object; Kuota admits it like any other, and leaves the Jobs and pods
// that object controls alone (their quota is the parent's), even with
// manageJobsWithoutQueueName on. A Job or pod without such a parent is
// still queued, so the setting is in force.
func TestExternalFrameworkWorkloadsAreAdmittedAndTheirChildrenLeftAlone(t *testing.T) {
	ctx := context.Background()
	crd := pipelineCRD()
	if err := env.Client.Create(ctx, crd); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4"), localQueue(ns, "lq", cq))

	cfg := testConfigWithWebhookPort(t, func(c *configapi.Configuration) {
		c.Integrations = &configapi.Integrations{
			Frameworks:         []string{batchjob.Integration.Name, pod.Integration.Name},
			ExternalFrameworks: []string{"Pipeline.v1.example.com"},
		}
		c.ManageJobsWithoutQueueName = true
	})
	m, err := env.StartManagerWith(cfg, func(o *app.Options) {
		o.LocalWebhooks = true
		o.Webhooks = append(o.Webhooks, app.JobWebhooks(cfg))
	})
	if err != nil {
		t.Fatal(err)
	}
	tm := &testManager{Manager: m}
	current = tm
	t.Cleanup(func() {
		if err := tm.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})

	var pipeline unstructured.Unstructured
	pipeline.SetAPIVersion("example.com/v1")
	pipeline.SetKind("Pipeline")
	pipeline.SetNamespace(ns)
	pipeline.SetName("etl")
	eventually(t, 30*time.Second, "the Pipeline kind is served", func() error { return env.Client.Create(ctx, &pipeline) })
	owner := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Pipeline", Name: "etl", UID: pipeline.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}

	// The pipeline engine's Workload is admitted.
	wl := newWorkload(ns, "pipeline-etl", "lq", 2, "1", 0)
	wl.OwnerReferences = []metav1.OwnerReference{owner}
	create(t, wl)
	waitAdmitted(t, ns, "pipeline-etl", cq)

	// Its Job runs as created: not suspended, no Workload of its own. The
	// webhooks are registered asynchronously, so the control Job (no
	// parent) is created first, until the webhook suspends it.
	eventually(t, 30*time.Second, "the Job webhook suspends a Job without a parent", func() error {
		lonely := childJob(ns, "lonely", nil)
		if err := env.Client.Create(ctx, lonely); err != nil {
			return err
		}
		if ptr.Deref(lonely.Spec.Suspend, false) {
			return nil
		}
		_ = env.Client.Delete(ctx, lonely, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return fmt.Errorf("created running: the webhook is not called yet")
	})
	child := childJob(ns, "step-1", &owner)
	create(t, child)
	if ptr.Deref(child.Spec.Suspend, false) {
		t.Errorf("the Pipeline's Job was suspended; its quota is the Pipeline's Workload's")
	}
	// Judged on the pods as created (the webhook's answer): a gated pod may
	// be admitted and ungated moments later, as the queue has room for it.
	gated := func(p *corev1.Pod) bool {
		return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == jobframework.AdmissionGate })
	}
	lonelyPod, ownedPod := childPod(ns, "step-2", nil), childPod(ns, "step-3", &owner)
	create(t, lonelyPod, ownedPod)
	if !gated(lonelyPod) {
		t.Errorf("a queued pod without a parent is not gated: the pod webhook is off")
	}
	if gated(ownedPod) {
		t.Errorf("the Pipeline's pod is gated; its quota is the Pipeline's Workload's")
	}
	afterCycles(t, 3, func() error {
		var wls kueue.WorkloadList
		if err := env.Client.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		var names []string
		for _, w := range wls.Items {
			if ref := metav1.GetControllerOf(&w); ref != nil && ref.UID == pipeline.GetUID() && w.Name != "pipeline-etl" {
				names = append(names, w.Name)
			}
			if slices.ContainsFunc(w.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == child.UID }) {
				names = append(names, w.Name)
			}
		}
		if len(names) > 0 {
			return fmt.Errorf("Workloads %v for the Pipeline's children", names)
		}
		return nil
	})
	if j := (&batchv1.Job{}); env.Client.Get(ctx, objectKey(ns, "step-1"), j) == nil && ptr.Deref(j.Spec.Suspend, false) {
		t.Errorf("the Pipeline's Job was suspended later by the reconciler")
	}
}

func childJob(ns, name string, owner *metav1.OwnerReference) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: childPodSpec()}}}
	if owner != nil {
		j.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return j
}

func childPod(ns, name string, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{jobframework.QueueNameLabel: "lq"}}, Spec: childPodSpec()}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func childPodSpec() corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
}

// testConfigWithWebhookPort is a test Configuration whose webhook server
// listens on a free port, with its certificates in a temporary folder.
func testConfigWithWebhookPort(t *testing.T, mutate func(*configapi.Configuration)) *configapi.Configuration {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg, err := framework.ManagerConfig(func(c *configapi.Configuration) {
		c.Webhook.Port = ptr.To(port)
		c.Webhook.CertDir = t.TempDir()
		mutate(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
