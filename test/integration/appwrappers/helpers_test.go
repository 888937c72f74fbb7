package appwrappers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/appwrapper"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/integrations/deployment"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// fixture is a running manager (AppWrapper, batch/v1 Job and Deployment
// integrations, its webhooks called by the API server) and a client that
// knows AppWrappers.
type fixture struct {
	t *testing.T
	c client.Client
	m *framework.Manager
}

func start(t *testing.T) *fixture {
	t.Helper()
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := framework.ManagerConfig(func(cfg *configapi.Configuration) {
		cfg.Integrations = &configapi.Integrations{Frameworks: []string{batchjob.Integration.Name, deployment.FrameworkName, appwrapper.FrameworkName}}
		cfg.Webhook.Port = ptr.To(freePort(t))
		cfg.Webhook.CertDir = t.TempDir()
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManagerWith(cfg, func(o *app.Options) {
		o.LocalWebhooks = true
		o.Webhooks = []func(ctrl.Manager) error{app.JobWebhooks(cfg)}
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, c: c, m: m}
	t.Cleanup(func() {
		if err := f.m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	f.waitForWebhooks()
	return f
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitForWebhooks waits until the API server calls the AppWrapper
// webhook: a dry-run create of a queued running AppWrapper comes back
// suspended.
func (f *fixture) waitForWebhooks() {
	ns, err := env.CreateNamespace(context.Background(), "probe")
	if err != nil {
		f.t.Fatal(err)
	}
	f.eventually("the AppWrapper webhook answers", func() error {
		aw := f.newAppWrapper(ns, "probe", "lq", 1, 1)
		if err := f.c.Create(context.Background(), aw, client.DryRunAll); err != nil {
			return err
		}
		if !aw.Spec.Suspend {
			return fmt.Errorf("not suspended by the webhook yet")
		}
		return nil
	})
}

func (f *fixture) eventually(what string, cond func() error) {
	f.t.Helper()
	testutil.Eventually(f.t, 45*time.Second, 50*time.Millisecond, what, cond)
}

func (f *fixture) create(objs ...client.Object) {
	f.t.Helper()
	for _, o := range objs {
		if err := f.c.Create(context.Background(), o); err != nil {
			f.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// queues creates a namespace, a flavor with a node label and a taint
// toleration, a ClusterQueue of nominal cpu that preempts lower
// priorities, LocalQueues "lq" and "default", and WorkloadPriorityClass
// <ns>-high (value 100).
func (f *fixture) queues(nominal string) (ns, cq, fl string) {
	f.t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "aw")
	if err != nil {
		f.t.Fatal(err)
	}
	cq, fl = ns+"-cq", ns+"-f"
	f.create(framework.Queues{Nominal: framework.CPU(nominal), LocalQueues: []string{"lq", jobframework.DefaultLocalQueueName},
		Priorities: map[string]int32{"high": 100}}.Objects(ns)...)
	return ns, cq, fl
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{"team": "ml"},
			Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		}}
}

// wrappedJob is the batch/v1 Job an AppWrapper wraps: pods 1-cpu pods.
func wrappedJob(name string, pods int32) *batchv1.Job {
	t := podTemplate()
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(pods), Completions: ptr.To(pods), Template: t}}
}

// wrappedDeployment is the Deployment an AppWrapper wraps: replicas 1-cpu
// pods.
func wrappedDeployment(name string, replicas int32) *appsv1.Deployment {
	t := podTemplate()
	t.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}, Template: t}}
}

func (f *fixture) raw(obj runtime.Object) runtime.RawExtension {
	f.t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		f.t.Fatal(err)
	}
	return runtime.RawExtension{Raw: data}
}

// newAppWrapper is an AppWrapper, not suspended (the webhook suspends
// it), wrapping a Job of jobPods pods (its pod set inferred) and a
// Deployment of replicas pods (its pod set declared).
func (f *fixture) newAppWrapper(ns, name, queue string, jobPods, replicas int32) *awv1beta2.AppWrapper {
	labels := map[string]string{}
	if queue != "" {
		labels[jobframework.QueueNameLabel] = queue
	}
	return &awv1beta2.AppWrapper{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: awv1beta2.AppWrapperSpec{Components: []awv1beta2.AppWrapperComponent{
			{Template: f.raw(wrappedJob(name+"-job", jobPods))},
			{Template: f.raw(wrappedDeployment(name+"-deploy", replicas)),
				DeclaredPodSets: []awv1beta2.AppWrapperPodSet{{Path: "template.spec.template", Replicas: ptr.To(replicas)}}},
		}},
	}
}

func (f *fixture) get(ns, name string) *awv1beta2.AppWrapper {
	f.t.Helper()
	var aw awv1beta2.AppWrapper
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &aw); err != nil {
		f.t.Fatal(err)
	}
	return &aw
}

// workloadOf returns the AppWrapper's Workload, or an error while there
// is none.
func (f *fixture) workloadOf(aw *awv1beta2.AppWrapper) (*kueue.Workload, error) {
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: aw.Namespace, Name: jobframework.WorkloadName(aw.Name, aw.UID, appwrapper.GVK)}
	if err := f.c.Get(context.Background(), key, &wl); err != nil {
		return nil, err
	}
	return &wl, nil
}

// onFlavor reports whether every component has one podSetInfo per pod set
// carrying the flavor's node label and toleration and its PodSet label.
func onFlavor(aw *awv1beta2.AppWrapper, fl string) error {
	for i, c := range aw.Spec.Components {
		if len(c.PodSetInfos) != 1 {
			return fmt.Errorf("component %d: podSetInfos %+v", i, c.PodSetInfos)
		}
		info := c.PodSetInfos[0]
		want := fmt.Sprintf("%s-%d", aw.Name, i)
		if info.NodeSelector["pool"] != fl || len(info.Tolerations) != 1 || info.Tolerations[0].Value != fl ||
			info.Labels[jobframework.PodSetLabel] != want {
			return fmt.Errorf("component %d: podSetInfo %+v", i, info)
		}
	}
	return nil
}

// waitRunning waits until the AppWrapper is resumed on the flavor.
func (f *fixture) waitRunning(ns, name, fl string) *awv1beta2.AppWrapper {
	f.t.Helper()
	var aw *awv1beta2.AppWrapper
	f.eventually("AppWrapper "+name+" resumed on flavor "+fl, func() error {
		aw = f.get(ns, name)
		if aw.Spec.Suspend {
			return fmt.Errorf("still suspended")
		}
		return onFlavor(aw, fl)
	})
	return aw
}

// setStatus plays the AppWrapper controller: it writes the AppWrapper's
// status.
func (f *fixture) setStatus(ns, name string, mutate func(*awv1beta2.AppWrapperStatus)) {
	f.t.Helper()
	f.eventually("status of "+name+" written", func() error {
		aw := f.get(ns, name)
		mutate(&aw.Status)
		return f.c.Status().Update(context.Background(), aw)
	})
}

// quotaReserved is the AppWrapper controller's QuotaReserved condition:
// true while the wrapped objects exist.
func quotaReserved(on bool) func(*awv1beta2.AppWrapperStatus) {
	return func(st *awv1beta2.AppWrapperStatus) {
		status := metav1.ConditionFalse
		if on {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(awv1beta2.QuotaReserved), Status: status, Reason: "Test"})
		if on {
			st.Phase = awv1beta2.AppWrapperRunning
		} else {
			st.Phase = awv1beta2.AppWrapperSuspended
		}
	}
}

func succeeded(st *awv1beta2.AppWrapperStatus) {
	st.Phase = awv1beta2.AppWrapperSucceeded
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(awv1beta2.QuotaReserved), Status: metav1.ConditionFalse, Reason: "Succeeded"})
}

func condition(wl *kueue.Workload, typ string) *metav1.Condition {
	return meta.FindStatusCondition(wl.Status.Conditions, typ)
}

// ownedBy makes obj controlled by the AppWrapper, as its controller does
// for what it creates.
func ownedBy(obj client.Object, aw *awv1beta2.AppWrapper) {
	obj.SetNamespace(aw.Namespace)
	obj.SetLabels(map[string]string{awv1beta2.AppWrapperLabel: aw.Name})
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: awv1beta2.GroupVersion.String(), Kind: "AppWrapper", Name: aw.Name, UID: aw.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
}
