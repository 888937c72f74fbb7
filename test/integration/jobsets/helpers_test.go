package jobsets

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// fixture is a running manager (JobSet and batch/v1 Job integrations, its
// webhooks called by the API server) and a client that knows JobSets.
type fixture struct {
	t *testing.T
	c client.Client
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
		cfg.Integrations = &configapi.Integrations{Frameworks: []string{batchjob.Integration.Name, jobset.FrameworkName}}
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
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	f := &fixture{t: t, c: c}
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

// waitForWebhooks waits until the API server calls the JobSet webhook: a
// dry-run create of a queued running JobSet comes back suspended.
func (f *fixture) waitForWebhooks() {
	ns, err := env.CreateNamespace(context.Background(), "probe")
	if err != nil {
		f.t.Fatal(err)
	}
	f.eventually("the JobSet webhook answers", func() error {
		js := newJobSet(ns, "probe", "lq", 1, 1)
		if err := f.c.Create(context.Background(), js, client.DryRunAll); err != nil {
			return err
		}
		if !ptr.Deref(js.Spec.Suspend, false) {
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
	ns, err := env.CreateNamespace(context.Background(), "js")
	if err != nil {
		f.t.Fatal(err)
	}
	cq, fl = ns+"-cq", ns+"-f"
	f.create(framework.Queues{Nominal: framework.CPU(nominal), LocalQueues: []string{"lq", jobframework.DefaultLocalQueueName},
		Priorities: map[string]int32{"high": 100}}.Objects(ns)...)
	return ns, cq, fl
}

// newJobSet is a JobSet, not suspended (the webhook suspends it), with a
// "driver" of one 1-cpu pod and "workers": replicas Jobs of parallelism
// 1-cpu pods.
func newJobSet(ns, name, queue string, replicas, parallelism int32) *jobsetapi.JobSet {
	labels := map[string]string{}
	if queue != "" {
		labels[jobframework.QueueNameLabel] = queue
	}
	rj := func(name string, replicas, parallelism int32) jobsetapi.ReplicatedJob {
		return jobsetapi.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{"team": "ml"},
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			}},
		}}}
	}
	return &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{
			rj("driver", 1, 1), rj("workers", replicas, parallelism),
		}},
	}
}

func (f *fixture) get(ns, name string) *jobsetapi.JobSet {
	f.t.Helper()
	var js jobsetapi.JobSet
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &js); err != nil {
		f.t.Fatal(err)
	}
	return &js
}

// workloadOf returns the JobSet's Workload, or an error while there is
// none.
func (f *fixture) workloadOf(js *jobsetapi.JobSet) (*kueue.Workload, error) {
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: js.Namespace, Name: jobframework.WorkloadName(js.Name, js.UID, jobset.GVK)}
	if err := f.c.Get(context.Background(), key, &wl); err != nil {
		return nil, err
	}
	return &wl, nil
}

// onFlavor reports whether every replicated job's pod template carries
// the flavor's node label and toleration (and keeps its own selector).
func onFlavor(js *jobsetapi.JobSet, fl string) error {
	for _, rj := range js.Spec.ReplicatedJobs {
		spec := rj.Template.Spec.Template.Spec
		if spec.NodeSelector["pool"] != fl || spec.NodeSelector["team"] != "ml" || len(spec.Tolerations) != 1 ||
			rj.Template.Spec.Template.Labels[jobframework.PodSetLabel] != rj.Name {
			return fmt.Errorf("replicated job %s: node selector %v, tolerations %v, labels %v",
				rj.Name, spec.NodeSelector, spec.Tolerations, rj.Template.Spec.Template.Labels)
		}
	}
	return nil
}

// waitRunning waits until the JobSet is resumed on the flavor.
func (f *fixture) waitRunning(ns, name, fl string) *jobsetapi.JobSet {
	f.t.Helper()
	var js *jobsetapi.JobSet
	f.eventually("JobSet "+name+" resumed on flavor "+fl, func() error {
		js = f.get(ns, name)
		if ptr.Deref(js.Spec.Suspend, false) {
			return fmt.Errorf("still suspended")
		}
		return onFlavor(js, fl)
	})
	return js
}

// setStatus plays the JobSet controller: it writes the JobSet's status.
func (f *fixture) setStatus(ns, name string, mutate func(*jobsetapi.JobSetStatus)) {
	f.t.Helper()
	f.eventually("status of "+name+" written", func() error {
		js := f.get(ns, name)
		mutate(&js.Status)
		return f.c.Status().Update(context.Background(), js)
	})
}

func active(n int32) func(*jobsetapi.JobSetStatus) {
	return func(st *jobsetapi.JobSetStatus) {
		st.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "driver", Active: n}, {Name: "workers", Active: n}}
	}
}

func completed(st *jobsetapi.JobSetStatus) {
	st.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "driver", Succeeded: 1}, {Name: "workers", Succeeded: 1}}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(jobsetapi.JobSetCompleted), Status: metav1.ConditionTrue,
		Reason: "AllJobsCompleted", Message: "jobset completed successfully"})
	st.TerminalState = string(jobsetapi.JobSetCompleted)
}

func condition(wl *kueue.Workload, typ string) *metav1.Condition {
	return meta.FindStatusCondition(wl.Status.Conditions, typ)
}
