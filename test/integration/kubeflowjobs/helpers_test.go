package kubeflowjobs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
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
	"github.com/kuota-dev/kuota/internal/integrations/kubeflow"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// integrations are the six Kubeflow integrations.
var integrations = []jobframework.Integration{kubeflow.PyTorchJobIntegration, kubeflow.TFJobIntegration,
	kubeflow.XGBoostJobIntegration, kubeflow.PaddleJobIntegration, kubeflow.JAXJobIntegration, kubeflow.MPIJobIntegration}

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
// "lq", and starts a manager with the six Kubeflow frameworks.
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
	ns, err := env.CreateNamespace(ctx, "kf")
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{t: t, c: c, ns: ns, cq: ns + "-cq", fl: ns + "-f"}
	s.create(framework.Queues{Nominal: framework.CPU(nominal), LocalQueues: []string{"lq"}}.Objects(ns)...)
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

// get reads obj again.
func (s *suite) get(obj client.Object) error {
	return s.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
}

// integrationOf is the integration of obj's kind.
func integrationOf(obj client.Object) jobframework.Integration {
	for _, in := range integrations {
		if fmt.Sprintf("%T", in.NewJob(nil).Object()) == fmt.Sprintf("%T", obj) {
			return in
		}
	}
	panic(fmt.Sprintf("no integration for %T", obj))
}

// workload returns the job's Workload, or nil.
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

// waitWorkload waits for the job's Workload.
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

// templates lists the job's pod templates, by PodSet.
func templates(obj client.Object) map[kueue.PodSetReference]corev1.PodTemplateSpec {
	ps, err := integrationOf(obj).NewJob(obj).PodSets()
	if err != nil {
		panic(err)
	}
	out := map[kueue.PodSetReference]corev1.PodTemplateSpec{}
	for _, p := range ps {
		out[p.Name] = p.Template
	}
	return out
}

// waitRunning waits until the job is resumed with the flavor's node label,
// its toleration and the PodSet label on every replica type's template.
func (s *suite) waitRunning(obj client.Object) {
	s.t.Helper()
	s.eventually(obj.GetName()+" resumed on flavor "+s.fl, func() error {
		if err := s.get(obj); err != nil {
			return err
		}
		if integrationOf(obj).NewJob(obj).IsSuspended() {
			return fmt.Errorf("still suspended")
		}
		for name, tpl := range templates(obj) {
			if tpl.Spec.NodeSelector["pool"] != s.fl || len(tpl.Spec.Tolerations) != 1 || tpl.Labels[jobframework.PodSetLabel] != string(name) {
				return fmt.Errorf("%s template: node selector %v tolerations %v labels %v", name, tpl.Spec.NodeSelector, tpl.Spec.Tolerations, tpl.Labels)
			}
		}
		return nil
	})
}

// staysQueued checks, over a few scheduling cycles, that the job stays suspended
// and its Workload holds no quota.
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

// waitFinished waits until the job's Workload is Finished (Succeeded),
// without the finalizer.
func (s *suite) waitFinished(obj client.Object) {
	s.t.Helper()
	s.eventually(obj.GetName()+"'s Workload finished", func() error {
		wl := s.workload(obj)
		if wl == nil {
			return fmt.Errorf("no Workload")
		}
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadFinishedSucceeded {
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

// phase is what the played operator reports.
type phase int

const (
	running   phase = iota // pods of every replica type active, Running
	suspended              // pods gone, Suspended
	succeeded              // pods done, Succeeded
)

// operator writes the job's status as its operator would in that phase.
func (s *suite) operator(obj client.Object, p phase) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%s status written (phase %d)", obj.GetName(), p), func() error {
		if err := s.get(obj); err != nil {
			return err
		}
		counts := map[string]int32{}
		ps, err := integrationOf(obj).NewJob(obj).PodSets()
		if err != nil {
			return err
		}
		for _, r := range ps {
			counts[string(r.Name)] = r.Count
		}
		conds := map[string]corev1.ConditionStatus{"Created": corev1.ConditionTrue}
		switch p {
		case running:
			conds["Running"] = corev1.ConditionTrue
		case suspended:
			conds["Running"], conds["Suspended"] = corev1.ConditionFalse, corev1.ConditionTrue
		case succeeded:
			conds["Running"], conds["Succeeded"] = corev1.ConditionFalse, corev1.ConditionTrue
		}
		now := metav1.Now()
		switch o := obj.(type) {
		case *mpi.MPIJob:
			o.Status = mpi.JobStatus{ReplicaStatuses: map[mpi.MPIReplicaType]*mpi.ReplicaStatus{}, StartTime: &now}
			for typ := range o.Spec.MPIReplicaSpecs {
				o.Status.ReplicaStatuses[typ] = replicaStatusMPI(p, counts[strings.ToLower(string(typ))])
			}
			for _, typ := range []string{"Created", "Running", "Suspended", "Succeeded"} {
				if st, ok := conds[typ]; ok {
					o.Status.Conditions = append(o.Status.Conditions, mpi.JobCondition{Type: mpi.JobConditionType(typ), Status: st,
						Reason: "Played", LastUpdateTime: now, LastTransitionTime: now})
				}
			}
		default:
			st := v1Status(obj)
			*st = kftraining.JobStatus{ReplicaStatuses: map[kftraining.ReplicaType]*kftraining.ReplicaStatus{}, StartTime: &now}
			for typ, n := range counts {
				st.ReplicaStatuses[kftraining.ReplicaType(typ)] = replicaStatusV1(p, n)
			}
			for _, typ := range []string{"Created", "Running", "Suspended", "Succeeded"} {
				if cs, ok := conds[typ]; ok {
					st.Conditions = append(st.Conditions, kftraining.JobCondition{Type: kftraining.JobConditionType(typ), Status: cs,
						Reason: "Played", LastUpdateTime: now, LastTransitionTime: now})
				}
			}
		}
		return s.c.Status().Update(context.Background(), obj)
	})
}

func replicaStatusMPI(p phase, n int32) *mpi.ReplicaStatus {
	switch p {
	case running:
		return &mpi.ReplicaStatus{Active: n}
	case succeeded:
		return &mpi.ReplicaStatus{Succeeded: n}
	}
	return &mpi.ReplicaStatus{}
}

func replicaStatusV1(p phase, n int32) *kftraining.ReplicaStatus {
	switch p {
	case running:
		return &kftraining.ReplicaStatus{Active: n}
	case succeeded:
		return &kftraining.ReplicaStatus{Succeeded: n}
	}
	return &kftraining.ReplicaStatus{}
}

func v1Status(obj client.Object) *kftraining.JobStatus {
	switch o := obj.(type) {
	case *kftraining.PyTorchJob:
		return &o.Status
	case *kftraining.TFJob:
		return &o.Status
	case *kftraining.XGBoostJob:
		return &o.Status
	case *kftraining.PaddleJob:
		return &o.Status
	case *kftraining.JAXJob:
		return &o.Status
	}
	panic(fmt.Sprintf("not a Kubeflow v1 job: %T", obj))
}

// podTemplate is a replica's template: one container asking for cpu.
func podTemplate(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "c", Image: "train",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
	}}
}

func v1Replica(n int32) *kftraining.ReplicaSpec {
	return &kftraining.ReplicaSpec{Replicas: ptr.To(n), Template: podTemplate("1")}
}

// objectMeta names a job queued in lq, with extra labels.
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
