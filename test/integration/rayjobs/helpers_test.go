package rayjobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/ray"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var integrations = []jobframework.Integration{ray.RayJobIntegration, ray.RayClusterIntegration, ray.RayServiceIntegration}

// suite is one test's client, namespace, queues and manager.
type suite struct {
	t      *testing.T
	c      client.Client
	ns, cq string
	fl     string
	m      *framework.Manager
}

// setUp creates a namespace, a flavor with a node label and a toleration,
// a ClusterQueue of nominal cpu that preempts lower priorities, LocalQueue
// "lq", and starts a manager with the three Ray frameworks.
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
	ns, err := env.CreateNamespace(ctx, "ray")
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{t: t, c: c, ns: ns, cq: ns + "-cq", fl: ns + "-f"}
	s.create(framework.Queues{Nominal: framework.CPUAndMemory(nominal, "100Gi"), LocalQueues: []string{"lq"}}.Objects(ns)...)
	cfg, err := framework.ManagerConfig(func(cfg *configapi.Configuration) {
		var names []string
		for _, in := range integrations {
			names = append(names, in.Name)
		}
		cfg.Integrations = &configapi.Integrations{Frameworks: names}
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

// integrationOf is the integration of obj's kind.
func integrationOf(obj client.Object) jobframework.Integration {
	switch obj.(type) {
	case *rayv1.RayJob:
		return ray.RayJobIntegration
	case *rayv1.RayCluster:
		return ray.RayClusterIntegration
	case *rayv1.RayService:
		return ray.RayServiceIntegration
	}
	panic(fmt.Sprintf("no integration for %T", obj))
}

// workload returns the object's Workload, or nil.
func (s *suite) workload(obj client.Object) *kueue.Workload {
	s.t.Helper()
	if err := s.get(obj); err != nil {
		s.t.Fatal(err)
	}
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: jobframework.WorkloadName(obj.GetName(), obj.GetUID(), integrationOf(obj).GVK)}
	if err := s.c.Get(context.Background(), key, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		s.t.Fatal(err)
	}
	return &wl
}

func (s *suite) waitWorkload(obj client.Object) *kueue.Workload {
	s.t.Helper()
	var wl *kueue.Workload
	s.eventually(obj.GetName()+"'s Workload exists", func() error {
		if wl = s.workload(obj); wl == nil {
			return fmt.Errorf("no Workload")
		}
		return nil
	})
	return wl
}

// clusterSpecOf is the cluster spec of a Ray object.
func clusterSpecOf(obj client.Object) *rayv1.RayClusterSpec {
	switch o := obj.(type) {
	case *rayv1.RayJob:
		return o.Spec.RayClusterSpec
	case *rayv1.RayCluster:
		return &o.Spec
	case *rayv1.RayService:
		return &o.Spec.RayClusterSpec
	}
	panic(fmt.Sprintf("not a Ray object: %T", obj))
}

// writtenTemplates lists the pod templates the object carries: head,
// worker groups, and a RayJob's spec.submitterPodTemplate when set.
func writtenTemplates(obj client.Object) map[string]*corev1.PodTemplateSpec {
	spec := clusterSpecOf(obj)
	out := map[string]*corev1.PodTemplateSpec{"head": &spec.HeadGroupSpec.Template}
	for i := range spec.WorkerGroupSpecs {
		out[spec.WorkerGroupSpecs[i].GroupName] = &spec.WorkerGroupSpecs[i].Template
	}
	if j, ok := obj.(*rayv1.RayJob); ok && j.Spec.SubmitterPodTemplate != nil {
		out["submitter"] = j.Spec.SubmitterPodTemplate
	}
	return out
}

// waitRunning waits until the object is resumed with the flavor's node
// label, its toleration and the PodSet label on every template it carries.
func (s *suite) waitRunning(obj client.Object) {
	s.t.Helper()
	s.eventually(obj.GetName()+" resumed on flavor "+s.fl, func() error {
		if err := s.get(obj); err != nil {
			return err
		}
		if integrationOf(obj).NewJob(obj).IsSuspended() {
			return fmt.Errorf("still suspended")
		}
		for name, tpl := range writtenTemplates(obj) {
			if tpl.Spec.NodeSelector["pool"] != s.fl || len(tpl.Spec.Tolerations) != 1 || tpl.Labels[jobframework.PodSetLabel] != name {
				return fmt.Errorf("%s template: node selector %v tolerations %v labels %v", name, tpl.Spec.NodeSelector, tpl.Spec.Tolerations, tpl.Labels)
			}
		}
		return nil
	})
}

// waitRestored waits until the object is suspended with its templates as
// they were created (no node selector, tolerations or Kuota labels).
func (s *suite) waitRestored(obj client.Object) {
	s.t.Helper()
	s.eventually(obj.GetName()+" suspended with its templates restored", func() error {
		if err := s.get(obj); err != nil {
			return err
		}
		if !integrationOf(obj).NewJob(obj).IsSuspended() {
			return fmt.Errorf("still running")
		}
		for name, tpl := range writtenTemplates(obj) {
			if len(tpl.Spec.NodeSelector) != 0 || len(tpl.Spec.Tolerations) != 0 || len(tpl.Labels) != 1 {
				return fmt.Errorf("%s template not restored: %+v %+v %v", name, tpl.Spec.NodeSelector, tpl.Spec.Tolerations, tpl.Labels)
			}
		}
		return nil
	})
}

// staysQueued checks, over a few scheduling cycles, that the object stays
// suspended and its Workload holds no quota.
func (s *suite) staysQueued(obj client.Object) {
	s.t.Helper()
	err := s.m.WaitCycles(3, 10*time.Second, func() error {
		if err := s.get(obj); err != nil {
			return err
		}
		if !integrationOf(obj).NewJob(obj).IsSuspended() {
			return fmt.Errorf("%s runs", obj.GetName())
		}
		if wl := s.workload(obj); wl == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("%s's Workload reserves quota (or is missing)", obj.GetName())
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// waitFinished waits until the object's Workload is Finished with reason,
// without the finalizer.
func (s *suite) waitFinished(obj client.Object, reason string) {
	s.t.Helper()
	s.eventually(obj.GetName()+"'s Workload finished", func() error {
		wl := s.workload(obj)
		if wl == nil {
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

// jobStatus writes a RayJob's status as the Ray operator would.
func (s *suite) jobStatus(j *rayv1.RayJob, deployment rayv1.JobDeploymentStatus, job rayv1.JobStatus, cluster rayv1.ClusterState) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%s status %s/%s written", j.Name, deployment, job), func() error {
		if err := s.get(j); err != nil {
			return err
		}
		j.Status.JobDeploymentStatus, j.Status.JobStatus = deployment, job
		j.Status.RayClusterStatus = rayv1.RayClusterStatus{State: cluster}
		if deployment == rayv1.JobDeploymentStatusComplete {
			j.Status.Message = "Job finished successfully."
		}
		return s.c.Status().Update(context.Background(), j)
	})
}

// clusterState writes a RayCluster's state as the Ray operator would.
func (s *suite) clusterState(rc *rayv1.RayCluster, state rayv1.ClusterState, readyWorkers int32) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%s state %s written", rc.Name, state), func() error {
		if err := s.get(rc); err != nil {
			return err
		}
		rc.Status.State, rc.Status.ReadyWorkerReplicas = state, readyWorkers
		return s.c.Status().Update(context.Background(), rc)
	})
}

// podTemplate is one container asking for cpu, labelled app=ray.
func podTemplate(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ray"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray:2.41.0",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
}

// clusterSpec is a head of 1 cpu and worker group "workers" of n pods of
// 1 cpu, suspended as the webhook would (the tests serve no webhooks).
func clusterSpec(n int32) rayv1.RayClusterSpec {
	return rayv1.RayClusterSpec{Suspend: ptr.To(true),
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: podTemplate("1")},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "workers", Replicas: ptr.To(n), MinReplicas: ptr.To(n), MaxReplicas: ptr.To(n),
			RayStartParams: map[string]string{}, Template: podTemplate("1")}},
	}
}

// objectMeta names an object queued in lq, with extra labels.
func (s *suite) objectMeta(name string, labels ...string) metav1.ObjectMeta {
	l := map[string]string{jobframework.QueueNameLabel: "lq"}
	for i := 0; i+1 < len(labels); i += 2 {
		l[labels[i]] = labels[i+1]
	}
	return metav1.ObjectMeta{Namespace: s.ns, Name: name, Labels: l}
}

// podSetNames lists a Workload's PodSets as name=count.
func podSetNames(wl *kueue.Workload) []string {
	var out []string
	for _, ps := range wl.Spec.PodSets {
		out = append(out, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	return out
}
