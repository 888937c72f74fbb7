package mkdispatch

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// withPods adds the pod integration to a test configuration.
func withPods(c *configapi.Configuration) {
	c.Integrations.Frameworks = append(c.Integrations.Frameworks, jobframework.PodFrameworkName)
}

// startWithPodsAnd starts the manager (with webhooks) and worker1 with the
// pod integration and the framework named, whose objects run in workers
// through their pods.
func startWithPodsAnd(t *testing.T, framework string) {
	t.Helper()
	with := func(c *configapi.Configuration) {
		withPods(c)
		c.Integrations.Frameworks = append(c.Integrations.Frameworks, framework)
	}
	startWithWebhooks(t, with)
	startManager(t, worker1, with)
}

// A pod group queued in the manager (gated and labelled by the manager's
// real webhook) is copied to the worker that reserves quota: the copies
// there are started by the worker's Kuota, while the manager's pods keep
// their gate and mirror the copies' status; when the copies succeed, the
// manager's Workload finishes and the worker's objects go.
func TestPodGroupRunsInAWorker(t *testing.T) {
	ns := setup(t)
	startWithWebhooks(t, withPods)
	startManager(t, worker1, withPods)
	var pods []*corev1.Pod
	for _, name := range []string{"shard-0", "shard-1"} {
		p := plainPod(ns, name)
		p.Labels[jobframework.PodGroupNameLabel] = "shards"
		p.Annotations = map[string]string{jobframework.PodGroupTotalCountAnnotation: "2"}
		pods = append(pods, p)
		create(t, manager, p)
	}
	wlKey := client.ObjectKey{Namespace: ns, Name: "shards"}
	runsInWorker1(t, ns, wlKey, pods)
}

// A single plain pod runs in a worker the same way.
func TestPlainPodRunsInAWorker(t *testing.T) {
	ns := setup(t)
	startWithWebhooks(t, withPods)
	startManager(t, worker1, withPods)
	p := plainPod(ns, "solo")
	create(t, manager, p)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(p.Name, p.UID, corev1.SchemeGroupVersion.WithKind("Pod"))}
	runsInWorker1(t, ns, wlKey, []*corev1.Pod{p})
}

func plainPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
	}
}

// runsInWorker1 follows pods queued in the manager through their run in
// worker1, playing worker1's kubelet.
func runsInWorker1(t *testing.T, ns string, wlKey client.ObjectKey, pods []*corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	for _, p := range pods {
		get(t, manager, client.ObjectKeyFromObject(p), p)
		if !jobframework.IsGated(p) {
			t.Fatalf("pod %s was not gated by the manager's webhook", p.Name)
		}
	}
	startsInWorker1(t, ns, wlKey, pods)
	setWorkerPods(t, pods, corev1.PodSucceeded)
	eventually(t, "the manager's workload finishes and worker1 keeps nothing", func() error {
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		var rw kueue.Workload
		if err := worker1.Client.Get(ctx, wlKey, &rw); err == nil && rw.DeletionTimestamp.IsZero() {
			return fmt.Errorf("worker1's copy is still there")
		}
		for _, p := range pods {
			var rp corev1.Pod
			if err := worker1.Client.Get(ctx, client.ObjectKeyFromObject(p), &rp); !apierrors.IsNotFound(err) && (err != nil || rp.DeletionTimestamp.IsZero()) {
				return fmt.Errorf("pod %s is still in worker1 (%v)", p.Name, err)
			}
		}
		return nil
	})
}

// startsInWorker1 waits for the workload of pods queued in the manager to
// be admitted on worker1 and the pods' copies to start there, then plays
// worker1's kubelet: the copies run, and the manager's pods, still gated,
// mirror that.
func startsInWorker1(t *testing.T, ns string, wlKey client.ObjectKey, pods []*corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	eventually(t, "the workload is admitted in the manager on worker1", func() error {
		var wl kueue.Workload
		if err := manager.Client.Get(ctx, wlKey, &wl); err != nil {
			return err
		}
		if ptr.Deref(wl.Status.ClusterName, "") != ns+"-worker1" || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("clusterName %v conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
		}
		return nil
	})
	for _, p := range pods {
		waitStarted(t, worker1, "worker1", p, wlKey.Name)
	}
	setWorkerPods(t, pods, corev1.PodRunning)
	for _, p := range pods {
		eventually(t, "pod "+p.Name+" mirrors its copy's run and stays gated", func() error {
			var lp corev1.Pod
			get(t, manager, client.ObjectKeyFromObject(p), &lp)
			if lp.Status.Phase != corev1.PodRunning || !jobframework.IsGated(&lp) {
				return fmt.Errorf("phase %s gated %v", lp.Status.Phase, jobframework.IsGated(&lp))
			}
			return nil
		})
	}
}

// waitStarted waits for a pod's copy in a worker to be ungated by the
// worker's Kuota, carrying the origin label and, when workload is set,
// naming that Workload as its prebuilt one.
func waitStarted(t *testing.T, e *framework.Env, worker string, p *corev1.Pod, workload string) {
	t.Helper()
	eventually(t, "pod "+p.Name+" is started in "+worker, func() error {
		var rp corev1.Pod
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &rp); err != nil {
			return err
		}
		if rp.Labels[kueue.MultiKueueOriginLabel] != "multikueue" ||
			(workload != "" && rp.Labels[jobframework.PrebuiltWorkloadLabel] != workload) {
			return fmt.Errorf("labels %v", rp.Labels)
		}
		if jobframework.IsGated(&rp) {
			return fmt.Errorf("still gated")
		}
		return nil
	})
}

// setWorkerPods plays worker1's kubelet: the copies' phase and readiness.
func setWorkerPods(t *testing.T, pods []*corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	for _, p := range pods {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var rp corev1.Pod
			if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &rp); err != nil {
				return err
			}
			now := metav1.Now()
			rp.Status.Phase, rp.Status.StartTime = phase, &now
			ready := corev1.ConditionTrue
			if phase != corev1.PodRunning {
				ready = corev1.ConditionFalse
			}
			rp.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: ready, LastTransitionTime: now}}
			return worker1.Client.Status().Update(context.Background(), &rp)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A plain pod evicted in its worker waits again in the manager, gated,
// with its mirrored run forgotten, and is dispatched anew.
func TestPlainPodEvictedInItsWorkerRunsElsewhere(t *testing.T) {
	ns := setup(t)
	startWithWebhooks(t, withPods)
	startManager(t, worker1, withPods)
	p := plainPod(ns, "again")
	create(t, manager, p)
	waitStarted(t, worker1, "worker1", p, "")
	setWorkerPods(t, []*corev1.Pod{p}, corev1.PodRunning)
	eventually(t, "the manager's pod mirrors the run", func() error {
		get(t, manager, client.ObjectKeyFromObject(p), p)
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	stopQueue(t, worker1, ns+"-cq")
	startManager(t, worker2, withPods)
	waitStarted(t, worker2, "worker2", p, "")
	eventually(t, "the manager's pod is kept, gated, and mirrors its new copy", func() error {
		get(t, manager, client.ObjectKeyFromObject(p), p)
		if p.Status.Phase != corev1.PodPending || !jobframework.IsGated(p) || !p.DeletionTimestamp.IsZero() {
			return fmt.Errorf("phase %s gated %v deleting %v", p.Status.Phase, jobframework.IsGated(p), !p.DeletionTimestamp.IsZero())
		}
		return nil
	})
}
