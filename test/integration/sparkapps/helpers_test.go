package sparkapps

import (
	"context"
	"fmt"
	"testing"
	"time"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/spark"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// suite is one test's client, namespace, queues and manager.
type suite struct {
	t      *testing.T
	c      client.Client
	ns, cq string
	fl     string
	m      *framework.Manager
}

// setUp creates a namespace, a flavor with a node label and a toleration,
// a ClusterQueue of nominal cpu (and ample memory) that preempts lower
// priorities, LocalQueue "lq", and starts a manager with the
// SparkApplication framework.
func setUp(t *testing.T, nominal string) *suite {
	t.Helper()
	ctx := context.Background()
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := env.CreateNamespace(ctx, "spark")
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{t: t, c: c, ns: ns, cq: ns + "-cq", fl: ns + "-f"}
	s.create(framework.Queues{Nominal: framework.CPUAndMemory(nominal, "100Gi"), LocalQueues: []string{"lq"}}.Objects(ns)...)
	cfg, err := framework.ManagerConfig(func(cfg *configapi.Configuration) {
		cfg.Integrations = &configapi.Integrations{Frameworks: []string{spark.FrameworkName}}
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.m, err = env.StartManager(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	return s
}

func (s *suite) create(objs ...client.Object) {
	s.t.Helper()
	for _, o := range objs {
		if err := s.c.Create(context.Background(), o); err != nil {
			s.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func (s *suite) eventually(what string, cond func() error) {
	s.t.Helper()
	testutil.Eventually(s.t, 45*time.Second, 50*time.Millisecond, what, cond)
}

func (s *suite) get(obj client.Object) error {
	return s.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
}

// sparkApp is a queued Scala SparkApplication of a driver and n executors
// asking for 1 cpu each (coreRequest) and 1g of memory, suspended as the
// webhook would (the tests serve no webhooks), with extra labels.
func (s *suite) sparkApp(name string, n int32, labels ...string) *sparkv1beta2.SparkApplication {
	l := map[string]string{jobframework.QueueNameLabel: "lq"}
	for i := 0; i+1 < len(labels); i += 2 {
		l[labels[i]] = labels[i+1]
	}
	return &sparkv1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name, Labels: l},
		Spec: sparkv1beta2.SparkApplicationSpec{
			Suspend: ptr.To(true), Type: sparkv1beta2.SparkApplicationTypeScala, Mode: sparkv1beta2.DeployModeCluster,
			SparkVersion: "4.0.0", Image: ptr.To("spark:4.0.0"),
			MainClass:            ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile:  ptr.To("local:///opt/spark/examples/jars/spark-examples.jar"),
			MemoryOverheadFactor: ptr.To("0"),
			Driver: sparkv1beta2.DriverSpec{
				SparkPodSpec: sparkv1beta2.SparkPodSpec{Memory: ptr.To("1g"), ServiceAccount: ptr.To("spark"),
					Labels: map[string]string{"app": name}},
				CoreRequest: ptr.To("1"),
			},
			Executor: sparkv1beta2.ExecutorSpec{
				SparkPodSpec: sparkv1beta2.SparkPodSpec{Memory: ptr.To("1g")},
				Instances:    ptr.To(n), CoreRequest: ptr.To("1"),
			},
		},
	}
}

// workload returns the application's Workload, or nil.
func (s *suite) workload(a *sparkv1beta2.SparkApplication) *kueue.Workload {
	s.t.Helper()
	if err := s.get(a); err != nil {
		s.t.Fatal(err)
	}
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: a.Namespace, Name: jobframework.WorkloadName(a.Name, a.UID, spark.GVK)}
	if err := s.c.Get(context.Background(), key, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		s.t.Fatal(err)
	}
	return &wl
}

func (s *suite) waitWorkload(a *sparkv1beta2.SparkApplication) *kueue.Workload {
	s.t.Helper()
	var wl *kueue.Workload
	s.eventually(a.Name+"'s Workload exists", func() error {
		if wl = s.workload(a); wl == nil {
			return fmt.Errorf("no Workload")
		}
		return nil
	})
	return wl
}

// roles are the driver's and the executors' specs of an application.
func roles(a *sparkv1beta2.SparkApplication) map[string]*sparkv1beta2.SparkPodSpec {
	return map[string]*sparkv1beta2.SparkPodSpec{"driver": &a.Spec.Driver.SparkPodSpec, "executor": &a.Spec.Executor.SparkPodSpec}
}

// waitRunning waits until the application is resumed with the flavor's
// node label, its toleration and the PodSet label in spec.driver and
// spec.executor, where the Spark operator takes them for the pods.
func (s *suite) waitRunning(a *sparkv1beta2.SparkApplication) {
	s.t.Helper()
	s.eventually(a.Name+" resumed on flavor "+s.fl, func() error {
		if err := s.get(a); err != nil {
			return err
		}
		if ptr.Deref(a.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		for name, ps := range roles(a) {
			if ps.NodeSelector["pool"] != s.fl || len(ps.Tolerations) != 1 || ps.Labels[jobframework.PodSetLabel] != name {
				return fmt.Errorf("spec.%s: node selector %v tolerations %v labels %v", name, ps.NodeSelector, ps.Tolerations, ps.Labels)
			}
		}
		return nil
	})
}

// waitRestored waits until the application is suspended with spec.driver
// and spec.executor as they were created.
func (s *suite) waitRestored(a *sparkv1beta2.SparkApplication) {
	s.t.Helper()
	s.eventually(a.Name+" suspended with spec.driver and spec.executor restored", func() error {
		if err := s.get(a); err != nil {
			return err
		}
		if !ptr.Deref(a.Spec.Suspend, false) {
			return fmt.Errorf("still running")
		}
		d, e := a.Spec.Driver, a.Spec.Executor
		if len(d.NodeSelector)+len(e.NodeSelector)+len(d.Tolerations)+len(e.Tolerations)+len(e.Labels) != 0 ||
			len(d.Labels) != 1 || len(d.Annotations)+len(e.Annotations) != 0 {
			return fmt.Errorf("not restored: driver %+v executor %+v", d.SparkPodSpec, e.SparkPodSpec)
		}
		return nil
	})
}

// staysQueued checks, over a few scheduling cycles, that the application
// stays suspended and its Workload holds no quota.
func (s *suite) staysQueued(a *sparkv1beta2.SparkApplication) {
	s.t.Helper()
	err := s.m.WaitCycles(3, 10*time.Second, func() error {
		if err := s.get(a); err != nil {
			return err
		}
		if !ptr.Deref(a.Spec.Suspend, false) {
			return fmt.Errorf("%s runs", a.Name)
		}
		if wl := s.workload(a); wl == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("%s's Workload reserves quota (or is missing)", a.Name)
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// state writes the application's state as the Spark operator would,
// with every executor in executorState when running.
func (s *suite) state(a *sparkv1beta2.SparkApplication, state sparkv1beta2.ApplicationStateType, msg string) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%s state %s written", a.Name, state), func() error {
		if err := s.get(a); err != nil {
			return err
		}
		a.Status.AppState = sparkv1beta2.ApplicationState{State: state, ErrorMessage: msg}
		a.Status.ExecutorState = nil
		if state == sparkv1beta2.ApplicationStateRunning {
			a.Status.ExecutorState = map[string]sparkv1beta2.ExecutorState{}
			for i := range ptr.Deref(a.Spec.Executor.Instances, 0) {
				a.Status.ExecutorState[fmt.Sprintf("%s-exec-%d", a.Name, i+1)] = sparkv1beta2.ExecutorStateRunning
			}
		}
		return s.c.Status().Update(context.Background(), a)
	})
}

// waitFinished waits until the application's Workload is Finished with
// reason, without the finalizer.
func (s *suite) waitFinished(a *sparkv1beta2.SparkApplication, reason string) *kueue.Workload {
	s.t.Helper()
	var wl *kueue.Workload
	s.eventually(a.Name+"'s Workload finished", func() error {
		if wl = s.workload(a); wl == nil {
			return fmt.Errorf("no Workload")
		}
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c == nil || c.Reason != reason {
			return fmt.Errorf("Finished %+v", c)
		}
		if len(wl.Finalizers) != 0 {
			return fmt.Errorf("finalizers %v", wl.Finalizers)
		}
		return nil
	})
	return wl
}

// waitQuotaFree waits until the ClusterQueue reserves for no Workload.
func (s *suite) waitQuotaFree() {
	s.t.Helper()
	s.eventually("the ClusterQueue's quota is free", func() error {
		var q kueue.ClusterQueue
		if err := s.c.Get(context.Background(), client.ObjectKey{Name: s.cq}, &q); err != nil {
			return err
		}
		if q.Status.ReservingWorkloads != 0 {
			return fmt.Errorf("reserving for %d workloads", q.Status.ReservingWorkloads)
		}
		return nil
	})
}

// podSetNames lists a Workload's PodSets as name=count.
func podSetNames(wl *kueue.Workload) []string {
	var out []string
	for _, ps := range wl.Spec.PodSets {
		out = append(out, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	return out
}
