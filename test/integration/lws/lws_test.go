package lws

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/leaderworkerset"
	"github.com/kuota-dev/kuota/internal/integrations/pod"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testutil.Eventually(t, 45*time.Second, 50*time.Millisecond, what, cond)
}

func template(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "serve",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// Each group of a LeaderWorkerSet is one Workload with a leader and a
// worker PodSet; a group that fits is admitted and its pods ungated with
// the flavor's node selector, the other's stay gated; scaling away a
// group deletes its Workload.
func TestEachGroupIsAWorkload(t *testing.T) {
	ctx := context.Background()
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := env.CreateNamespace(ctx, "lws")
	if err != nil {
		t.Fatal(err)
	}
	cq, fl := ns+"-cq", ns+"-f"
	for _, o := range []client.Object{
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": fl}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("3")}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := framework.ManagerConfig(func(cfg *configapi.Configuration) {
		cfg.Integrations = &configapi.Integrations{Frameworks: []string{leaderworkerset.FrameworkName}}
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })

	leader := template("1")
	lws := &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "infer", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](2), LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{
			Size: ptr.To[int32](3), LeaderTemplate: &leader, WorkerTemplate: template("1"),
			RestartPolicy: lwsv1.RecreateGroupOnPodRestart},
			// What the LeaderWorkerSet's own defaulting webhook sets.
			RolloutStrategy: lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType},
			StartupPolicy:   lwsv1.LeaderCreatedStartupPolicy},
	}
	if err := c.Create(ctx, lws); err != nil {
		t.Fatal(err)
	}
	var admitted, pending int
	eventually(t, "one Workload per group, one of them admitted", func() error {
		admitted, pending = -1, -1
		for i := range 2 {
			var wl kueue.Workload
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaderworkerset.WorkloadName(lws, i)}, &wl); err != nil {
				return err
			}
			if len(wl.Spec.PodSets) != 2 || wl.Spec.PodSets[0].Name != leaderworkerset.LeaderPodSet || wl.Spec.PodSets[0].Count != 1 ||
				wl.Spec.PodSets[1].Name != leaderworkerset.WorkerPodSet || wl.Spec.PodSets[1].Count != 2 {
				return fmt.Errorf("Workload %d has podSets %v, want leader 1 and worker 2", i, wl.Spec.PodSets)
			}
			if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
				admitted = i
			} else {
				pending = i
			}
		}
		if admitted < 0 || pending < 0 {
			return fmt.Errorf("admitted group %d, pending group %d; want one of each", admitted, pending)
		}
		return nil
	})

	// Play the LeaderWorkerSet controller: both groups' pods, through the
	// pod webhook.
	hook := &pod.Webhook{Client: c, Live: c, Options: jobframework.Options{Enabled: []jobframework.Integration{pod.Integration, leaderworkerset.Integration}}}
	for _, g := range []int{admitted, pending} {
		for w := range 3 {
			p := groupPod(ns, lws, g, w)
			if err := hook.Default(ctx, p); err != nil {
				t.Fatalf("pod webhook on %s: %v", p.Name, err)
			}
			if !jobframework.IsGated(p) || p.Labels[jobframework.PrebuiltWorkloadLabel] != leaderworkerset.WorkloadName(lws, g) {
				t.Fatalf("pod %s: gates %v labels %v, want gated and tied to its group's Workload", p.Name, p.Spec.SchedulingGates, p.Labels)
			}
			if err := c.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, "the admitted group's pods are ungated on the flavor", func() error {
		for w := range 3 {
			var p corev1.Pod
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName(lws, admitted, w)}, &p); err != nil {
				return err
			}
			if jobframework.IsGated(&p) || p.Spec.NodeSelector["pool"] != fl {
				return fmt.Errorf("pod %s: gates %v node selector %v", p.Name, p.Spec.SchedulingGates, p.Spec.NodeSelector)
			}
		}
		return nil
	})
	for w := range 3 {
		var p corev1.Pod
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName(lws, pending, w)}, &p); err != nil || !jobframework.IsGated(&p) {
			t.Fatalf("pod %d of the pending group must stay gated (%v)", w, err)
		}
	}

	// Scale away the last group: its Workload goes.
	last := 1
	eventually(t, "scaled to one group", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(lws), lws); err != nil {
			return err
		}
		lws.Spec.Replicas = ptr.To[int32](1)
		return c.Update(ctx, lws)
	})
	eventually(t, "the scaled-away group's Workload is gone", func() error {
		var wl kueue.Workload
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaderworkerset.WorkloadName(lws, last)}, &wl)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v): finalizers %v", err, wl.Finalizers)
	})
}

func podName(lws *lwsv1.LeaderWorkerSet, group, worker int) string {
	if worker == 0 {
		return fmt.Sprintf("%s-%d", lws.Name, group)
	}
	return fmt.Sprintf("%s-%d-%d", lws.Name, group, worker)
}

// groupPod is the pod the LeaderWorkerSet controller (through its
// StatefulSets) creates for a group's leader (worker 0) or worker.
func groupPod(ns string, lws *lwsv1.LeaderWorkerSet, group, worker int) *corev1.Pod {
	t := lws.Spec.LeaderWorkerTemplate.WorkerTemplate
	if worker == 0 {
		t = *lws.Spec.LeaderWorkerTemplate.LeaderTemplate
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: podName(lws, group, worker),
			Labels: map[string]string{lwsv1.SetNameLabelKey: lws.Name, lwsv1.WorkerIndexLabelKey: fmt.Sprint(worker)},
			Annotations: map[string]string{jobframework.SuspendingParentAnnotation: leaderworkerset.FrameworkName,
				jobframework.PodGroupServingAnnotation: "true", lwsv1.SizeAnnotationKey: "3"}},
		Spec: *t.Spec.DeepCopy(),
	}
	if worker > 0 {
		p.Labels[lwsv1.GroupIndexLabelKey] = fmt.Sprint(group)
		p.Annotations[lwsv1.LeaderPodNameAnnotationKey] = podName(lws, group, 0)
	}
	return p
}
