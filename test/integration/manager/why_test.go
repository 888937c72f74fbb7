package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/why"
)

// `kuota why` on a live cluster: a workload short of quota is told who
// holds it, and its estimated start (when the holder's maximum execution
// time runs out and the manager ends it) matches when it is really
// admitted, within the scheduler's reaction time. A workload of a stopped
// LocalQueue is told so.
func TestWhyExplainsAndEstimatesTheStart(t *testing.T) {
	ctx := context.Background()
	startManager(t)
	ns, cq, _ := singleQueue(t, "4")
	holder := newWorkload(ns, "holder", "lq", 1, "4", 0)
	holder.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](8)
	create(t, holder)
	waitAdmitted(t, ns, "holder", cq)
	create(t, newWorkload(ns, "waiting", "lq", 1, "2", 0))
	waitPending(t, ns, "waiting", kueue.WorkloadReasonWaitingForQuota)

	st, err := why.Read(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := why.Explain(st, ns, "waiting", why.Options{Scheduling: scheduling.Options{Patience: scheduling.DefaultPatience}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Blockers) == 0 || ex.Blockers[0].Cause != why.CauseQuota || len(ex.Resources) != 1 ||
		len(ex.Resources[0].Holders) != 1 || ex.Resources[0].Holders[0].Workload != ns+"/holder" {
		t.Fatalf("explanation %+v, want insufficient quota held by %s/holder", ex, ns)
	}
	var text strings.Builder
	if err := why.Render(&text, ex); err != nil {
		t.Fatal(err)
	}
	t.Logf("kuota why %s -n %s:\n%s", "waiting", ns, text.String())
	e := ex.Estimate
	if e == nil || !e.Known || !strings.Contains(e.Assumption, "maximumExecutionTimeSeconds") {
		t.Fatalf("estimate %+v, want one from the holder's maximum execution time", e)
	}
	var admittedAt time.Time
	eventually(t, 30*time.Second, "waiting admitted", func() error {
		wl := getWorkload(t, ns, "waiting")
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
		if c == nil || c.Status != "True" {
			return fmt.Errorf("not admitted yet")
		}
		admittedAt = c.LastTransitionTime.Time
		return nil
	})
	// Condition times are stamped in seconds: allow them, and the eviction's
	// round trip.
	if off := admittedAt.Sub(e.At); off < -2*time.Second || off > 3*time.Second {
		t.Errorf("estimated start %s, admitted at %s (off by %s)", e.At.Format(time.RFC3339), admittedAt.Format(time.RFC3339), off)
	}

	update(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}},
		func(lq *kueue.LocalQueue) { lq.Spec.StopPolicy = ptr.To(kueue.Hold) })
	create(t, newWorkload(ns, "held", "lq", 1, "1", 0))
	eventually(t, 45*time.Second, "why names the stopped LocalQueue", func() error {
		st, err := why.Read(ctx, env.Client)
		if err != nil {
			return err
		}
		ex, err := why.Explain(st, ns, "held", why.Options{})
		if err != nil {
			return err
		}
		if len(ex.Blockers) == 0 || ex.Blockers[0].Cause != why.CauseLocalQueueStopped {
			return fmt.Errorf("blockers %+v", ex.Blockers)
		}
		return nil
	})
}
