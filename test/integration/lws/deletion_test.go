package lws

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/leaderworkerset"
	"github.com/kuota-dev/kuota/internal/integrations/pod"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// A LeaderWorkerSet's quota is held per group, by the group's Workload
// (owned by the LeaderWorkerSet) and the pod integration, which counts the
// group's pods. Deleting the LeaderWorkerSet leaves the rest to garbage
// collection, which does not run here and is played: it deletes the
// group's Workload and the pods (through the StatefulSets, the leader's
// owned by the LeaderWorkerSet, the workers' by the leader pod). The
// Workload keeps its finalizer, and the ClusterQueue its reservation,
// while the pods run after the LeaderWorkerSet is gone and while they
// terminate, also when the manager restarts in the middle; both go once
// the pods are gone.
func TestDeletedLeaderWorkerSetGroupHoldsQuotaWhilePodsTerminate(t *testing.T) {
	framework.EachManager(t, func(t *testing.T, restart bool) {
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
		cq := framework.ClusterQueueName(ns)
		for _, o := range (framework.Queues{Nominal: framework.CPU("4"), LocalQueues: []string{"lq"}}).Objects(ns) {
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
		restartManager := framework.Restartable(t, m)
		maybeRestart := func(when string) {
			if !restart {
				return
			}
			if err := restartManager(); err != nil {
				t.Fatalf("restarting the manager %s: %v", when, err)
			}
		}

		leader := template("1")
		lws := &lwsv1.LeaderWorkerSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
			Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](1), LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{
				Size: ptr.To[int32](2), LeaderTemplate: &leader, WorkerTemplate: template("1"),
				RestartPolicy: lwsv1.RecreateGroupOnPodRestart},
				RolloutStrategy: lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType},
				StartupPolicy:   lwsv1.LeaderCreatedStartupPolicy},
		}
		if err := c.Create(ctx, lws); err != nil {
			t.Fatal(err)
		}
		wlKey := client.ObjectKey{Namespace: ns, Name: leaderworkerset.WorkloadName(lws, 0)}
		var wl kueue.Workload
		eventually(t, "the group's Workload is admitted", func() error {
			if err := c.Get(ctx, wlKey, &wl); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
				return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
			}
			return nil
		})

		// The group's pods as the StatefulSets create them, through the
		// pod webhook.
		hook := &pod.Webhook{Client: c, Live: c, Options: jobframework.Options{Enabled: []jobframework.Integration{pod.Integration, leaderworkerset.Integration}}}
		owners := []struct{ sts, uid string }{
			{"gone", "4e9a1d7c-6b32-4f08-a1c5-8d2e7f3b9a60"},   // the leader StatefulSet
			{"gone-0", "b81f3c5e-2d74-4a96-9e0b-5c7a1f6d2e83"}, // the group's worker StatefulSet
		}
		var pods []*corev1.Pod
		for w, o := range owners {
			p := groupPod(ns, lws, 0, w)
			p.Annotations[lwsv1.SizeAnnotationKey] = "2"
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: o.sts,
				UID: types.UID(o.uid), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			if err := hook.Default(ctx, p); err != nil {
				t.Fatalf("pod webhook on %s: %v", p.Name, err)
			}
			if err := c.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
			pods = append(pods, p)
		}
		eventually(t, "the group's pods are ungated", func() error {
			for _, p := range pods {
				var got corev1.Pod
				if err := c.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
					return err
				}
				if jobframework.IsGated(&got) {
					return fmt.Errorf("pod %s gated: %v", p.Name, got.Spec.SchedulingGates)
				}
			}
			return nil
		})
		// The scheduler binds them and they run: a pod holds resources
		// once it is on a node, and, deleted, it terminates until the
		// kubelet, which does not run here, removes it.
		for _, p := range pods {
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name},
				Target: corev1.ObjectReference{Kind: "Node", Name: "node-a"}}
			if err := c.SubResource("binding").Create(ctx, p, b); err != nil {
				t.Fatalf("binding pod %s: %v", p.Name, err)
			}
			eventually(t, p.Name+" runs", func() error {
				if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
					return err
				}
				p.Status.Phase = corev1.PodRunning
				return c.Status().Update(ctx, p)
			})
		}
		eventually(t, "the ClusterQueue reserves for the group", func() error { return framework.Reserving(c, cq, 1) })

		if err := c.Delete(ctx, lws, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		maybeRestart("after the LeaderWorkerSet's deletion")
		framework.HoldsQuota(t, c, wlKey, cq, "while the pods run after the LeaderWorkerSet's deletion")

		// Garbage collection: the Workload, and the pods through their
		// StatefulSets.
		if err := c.Delete(ctx, &wl, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if err := c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
		}
		maybeRestart("while the pods terminate")
		framework.HoldsQuota(t, c, wlKey, cq, "while the pods terminate")

		// The kubelet: the containers stopped, it removes the pods.
		for _, p := range pods {
			eventually(t, "the kubelet removes "+p.Name, func() error {
				return client.IgnoreNotFound(c.Delete(ctx, p, client.GracePeriodSeconds(0)))
			})
		}
		eventually(t, "the Workload goes once the pods are gone", func() error {
			var got kueue.Workload
			if err := c.Get(ctx, wlKey, &got); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v), finalizers %v, pods left %v", err, got.Finalizers, podsLeft(c, ns))
			}
			return nil
		})
		eventually(t, "the ClusterQueue reserves nothing", func() error { return framework.Reserving(c, cq, 0) })
	})
}

// podsLeft names the namespace's pods with their finalizers.
func podsLeft(c client.Client, ns string) []string {
	var list corev1.PodList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, fmt.Sprintf("%s%v", p.Name, p.Finalizers))
	}
	return out
}
