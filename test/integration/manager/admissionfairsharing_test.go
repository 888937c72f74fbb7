package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// Kueue's admission fair sharing example, unchanged (a 9-CPU StrictFIFO
// ClusterQueue with admissionScope UsageBasedAdmissionFairSharing, fed by
// LocalQueues lq-a and lq-b): lq-a fills the queue and queues two more
// workloads before lq-b queues its own. When quota frees, lq-b, which has
// used nothing, goes first although lq-a's workloads are older (strict
// FIFO alone would admit lq-a's); lq-a's LocalQueue publishes its decayed
// usage.
func TestAdmissionFairSharingExample(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.AdmissionFairSharing = &configapi.AdmissionFairSharing{
			UsageHalfLifeTime:     metav1.Duration{Duration: 10 * time.Second},
			UsageSamplingInterval: metav1.Duration{Duration: time.Second},
		}
		c.Metrics.LocalQueueMetrics = &configapi.LocalQueueMetrics{Enable: true}
	})
	ctx := context.Background()
	for _, e := range testutil.KueueExamples(t, kueue.GroupVersion.Group, func(string) bool { return true }) {
		if e.File != "admission-fs/admission-fair-sharing-setup.yaml" {
			continue
		}
		if err := env.Client.Create(ctx, e.Obj); err != nil {
			t.Fatalf("creating %s %s: %v", e.Obj.GetKind(), e.Obj.GetName(), err)
		}
		obj := e.Obj
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	ns := "default"
	add := func(name, lq string) {
		wl := newWorkload(ns, name, lq, 1, "3", 0)
		create(t, wl)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), wl) })
	}
	for _, name := range []string{"afs-a1", "afs-a2", "afs-a3"} {
		add(name, "lq-a")
		waitAdmitted(t, ns, name, "cluster-queue")
	}
	add("afs-a4", "lq-a")
	add("afs-a5", "lq-a")
	time.Sleep(1100 * time.Millisecond) // creation times are kept to the second
	add("afs-b1", "lq-b")
	add("afs-b2", "lq-b")
	stayPending(t, ns, "afs-a4", "afs-a5", "afs-b1", "afs-b2")

	// Workloads created in the same second are ordered by UID: which of
	// lq-b's (or lq-a's) goes first is left open.
	finish(t, ns, "afs-a1")
	first := waitOneAdmitted(t, ns, "afs-b1", "afs-b2")
	stayPending(t, ns, "afs-a4", "afs-a5")
	finish(t, ns, "afs-a2")
	waitAdmitted(t, ns, slicesWithout([]string{"afs-b1", "afs-b2"}, first)[0], "cluster-queue")
	stayPending(t, ns, "afs-a4", "afs-a5")
	finish(t, ns, first)
	waitOneAdmitted(t, ns, "afs-a4", "afs-a5")

	eventually(t, 45*time.Second, "lq-a publishes its usage", func() error {
		var lq kueue.LocalQueue
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "lq-a"}, &lq); err != nil {
			return err
		}
		fs := lq.Status.FairSharing
		if fs == nil || fs.AdmissionFairSharingStatus == nil {
			return fmt.Errorf("no admission fair sharing status: %+v", fs)
		}
		cpu := fs.AdmissionFairSharingStatus.ConsumedResources[corev1.ResourceCPU]
		if cpu.Sign() <= 0 || fs.AdmissionFairSharingStatus.LastUpdate.IsZero() {
			return fmt.Errorf("consumed %v at %v", fs.AdmissionFairSharingStatus.ConsumedResources, fs.AdmissionFairSharingStatus.LastUpdate)
		}
		return nil
	})
	eventually(t, 45*time.Second, "lq-a's usage in kueue_local_queue_admission_fair_sharing_usage", func() error {
		v, ok := metricValue(t, "kueue_local_queue_admission_fair_sharing_usage",
			map[string]string{"name": "lq-a", "namespace": ns, "cluster_queue": "cluster-queue"})
		if !ok || v <= 0 {
			return fmt.Errorf("value %v (found %v)", v, ok)
		}
		return nil
	})
}

// waitOneAdmitted waits until exactly one of two workloads is admitted and
// returns it; the other stays pending.
func waitOneAdmitted(t *testing.T, ns, a, b string) string {
	t.Helper()
	var got string
	eventually(t, 45*time.Second, fmt.Sprintf("%s or %s admitted", a, b), func() error {
		pending := pendingOf(t, ns, a, b)
		if len(pending) != 1 {
			return fmt.Errorf("pending: %v", pending)
		}
		got = slicesWithout([]string{a, b}, pending[0])[0]
		return nil
	})
	stayPending(t, ns, slicesWithout([]string{a, b}, got)...)
	return got
}
