package audit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// consistentObjects is a small cluster whose status matches its workloads:
// cq-a in cohort "team" holds a (admitted, 4 pods of which 1 reclaimable)
// and b (reserving only); c is finished, d pending, e finished and being
// deleted within the grace period.
func consistentObjects() []client.Object {
	cqA := newClusterQueue("cq-a", "team",
		quota{flavor: "default", res: "cpu", nominal: "10"},
		quota{flavor: "default", res: "memory", nominal: "10Gi"})
	withStatus(cqA,
		flavorUsage("default", usage{"cpu": "5", "memory": "5Gi"}),
		flavorUsage("default", usage{"cpu": "3", "memory": "3Gi"}), 2, 1)
	return []client.Object{
		newFlavor("default"),
		newCohort("team", "", quota{flavor: "default", res: "cpu", nominal: "2"}),
		cqA,
		newClusterQueue("cq-b", "", quota{flavor: "default", res: "cpu", nominal: "4"}),
		newWorkload("a", 4, admitted("cq-a", "default", 4, usage{"cpu": "4", "memory": "4Gi"}),
			reclaimable(1), ownedBy("Job", "job-a", "job-a-uid")),
		newWorkload("b", 2, reserving("cq-a", "default", 2, usage{"cpu": "2", "memory": "2Gi"})),
		newWorkload("c", 8, admitted("cq-a", "default", 8, usage{"cpu": "8"}),
			finished(testNow.Add(-time.Hour)), ownedBy("Job", "job-a", "job-a-uid")),
		newWorkload("d", 1),
		newWorkload("e", 1, admitted("cq-a", "default", 1, usage{"cpu": "1"}),
			finished(testNow.Add(-time.Hour)), deleting(testNow.Add(-10*time.Second))),
	}
}

func toObjects(objs []client.Object) *Objects {
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	return objects(items...)
}

func ofKind(r *Report, kind string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Kind == kind {
			out = append(out, v)
		}
	}
	return out
}

func wantViolations(t *testing.T, r *Report, kind string, want ...string) {
	t.Helper()
	got := ofKind(r, kind)
	var lines []string
	for _, v := range got {
		lines = append(lines, v.Object+": "+v.Message)
	}
	if !slices.Equal(lines, want) {
		t.Errorf("%s violations:\n got %q\nwant %q\nfull report:\n%s", kind, lines, want, r)
	}
}

func TestConsistentStateReportsNothing(t *testing.T) {
	r := check(toObjects(consistentObjects()))
	if !r.OK() {
		t.Fatalf("want no violations, got:\n%s", r)
	}
	want := "Audited 5 workloads, 2 cluster queues, 1 cohorts, 1 resource flavors: no violations.\n"
	if r.String() != want {
		t.Errorf("String() = %q, want %q", r.String(), want)
	}
}

// newScheme has the built-in kinds (pods, Jobs) and Kueue's.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func TestRunThroughFakeClient(t *testing.T) {
	scheme := newScheme(t)
	objs := consistentObjects()
	other := newWorkload("x", 1, reserving("cq-b", "default", 1, usage{"cpu": "5"}))
	other.Namespace = "other"
	jobA := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-a", UID: "job-a-uid"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, other, jobA)...).Build()
	r, err := RunWithOptions(context.Background(), c, Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workloads != 6 || r.ClusterQueues != 2 || r.Cohorts != 1 || r.ResourceFlavors != 1 {
		t.Errorf("counts = %+v", r)
	}
	wantViolations(t, r, KindNominalQuotaExceeded,
		"ClusterQueue cq-b: without a cohort, uses 5 of default/cpu, above its nominal quota 4")
	wantViolations(t, r, KindStatusMismatch,
		"ClusterQueue cq-b: status.flavorsReservation default/cpu total is 0, but workloads holding a reservation use 5",
		"ClusterQueue cq-b: status.reservingWorkloads is 0, but 1 workloads hold a reservation")
	if len(r.Violations) != 3 {
		t.Errorf("want 3 violations, got:\n%s", r)
	}
	if _, err := Run(context.Background(), c); err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestRunWrapsListErrors(t *testing.T) {
	scheme := newScheme(t)
	boom := errors.New("boom")
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*kueue.CohortList); ok {
				return boom
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	_, err := Run(context.Background(), c)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "listing cohorts") {
		t.Errorf("Run = %v, want a wrapped list error naming cohorts", err)
	}
}

func TestDoubleAdmission(t *testing.T) {
	cq := newClusterQueue("cq", "", quota{flavor: "f", res: "cpu", nominal: "100"})
	res := func(opts ...wlOpt) []wlOpt {
		return append([]wlOpt{reserving("cq", "f", 1, usage{"cpu": "1"})}, opts...)
	}
	tests := []struct {
		name string
		wls  []*kueue.Workload
		want []string
	}{{
		name: "same controller",
		wls: []*kueue.Workload{
			newWorkload("a", 1, res(ownedBy("Job", "job", "j1"))...),
			newWorkload("b", 1, res(ownedBy("Job", "job", "j1"))...),
		},
		want: []string{"Workload ns/a: 2 workloads of owner Job job (uid j1) hold quota at once: " +
			"ns/a (ClusterQueue cq), ns/b (ClusterQueue cq)"},
	}, {
		name: "same job-uid label",
		wls: []*kueue.Workload{
			newWorkload("a", 1, res(jobUID("j2"))...),
			newWorkload("b", 1, res(jobUID("j2"))...),
			newWorkload("c", 1, res(jobUID("j2"))...),
		},
		want: []string{"Workload ns/a: 3 workloads of label kueue.x-k8s.io/job-uid=j2 hold quota at once: " +
			"ns/a (ClusterQueue cq), ns/b (ClusterQueue cq), ns/c (ClusterQueue cq)"},
	}, {
		name: "owner and label agree: reported once",
		wls: []*kueue.Workload{
			newWorkload("a", 1, res(ownedBy("Job", "job", "j3"), jobUID("j3"))...),
			newWorkload("b", 1, res(ownedBy("Job", "job", "j3"), jobUID("j3"))...),
		},
		want: []string{"Workload ns/a: 2 workloads of label kueue.x-k8s.io/job-uid=j3 hold quota at once: " +
			"ns/a (ClusterQueue cq), ns/b (ClusterQueue cq)"},
	}, {
		name: "finished and pending ones do not count",
		wls: []*kueue.Workload{
			newWorkload("a", 1, res(ownedBy("Job", "job", "j4"))...),
			newWorkload("b", 1, res(ownedBy("Job", "job", "j4"), finished(testNow))...),
			newWorkload("c", 1, ownedBy("Job", "job", "j4")),
		},
	}, {
		name: "different owners",
		wls: []*kueue.Workload{
			newWorkload("a", 1, res(ownedBy("Job", "job", "j5"), jobUID("j5"))...),
			newWorkload("b", 1, res(ownedBy("Job", "job2", "j6"), jobUID("j6"))...),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := []any{cq, newFlavor("f")}
			for _, wl := range tc.wls {
				items = append(items, wl)
			}
			wantViolations(t, check(objects(items...)), KindDoubleAdmission, tc.want...)
		})
	}
}

func TestReservationConsistency(t *testing.T) {
	cq := newClusterQueue("cq", "", quota{flavor: "f", res: "cpu", nominal: "10"})
	r := check(objects(cq, newFlavor("f"),
		newWorkload("no-reservation", 1, withAdmission("cq", "f", 1, usage{"cpu": "1"}),
			withCondition(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, testNow)),
		newWorkload("no-admission", 1, withCondition(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, testNow)),
		newWorkload("admitted-only", 1, withCondition(kueue.WorkloadAdmitted, metav1.ConditionTrue, testNow)),
	))
	wantViolations(t, r, KindInconsistentReservation,
		"Workload ns/no-admission: QuotaReserved is True but status.admission is not set",
		`Workload ns/no-reservation: status.admission is set (ClusterQueue "cq") but QuotaReserved is False`)
	wantViolations(t, r, KindAdmittedWithoutReservation,
		"Workload ns/admitted-only: Admitted is True but QuotaReserved is not set")
	if len(r.Violations) != 3 {
		t.Errorf("inconsistent workloads must not count as usage; got:\n%s", r)
	}
}

func TestStatusMismatch(t *testing.T) {
	cq := withStatus(newClusterQueue("cq", "", quota{flavor: "f", res: "cpu", nominal: "10"}),
		append(flavorUsage("f", usage{"cpu": "3"}), flavorUsage("spot", usage{"cpu": "1"})...),
		nil, 1, 1)
	r := check(objects(cq, newFlavor("f"), newFlavor("spot"),
		newWorkload("a", 2, admitted("cq", "f", 2, usage{"cpu": "2500m"})),
		newWorkload("b", 1, reserving("cq", "f", 1, usage{"cpu": "1"})),
	))
	wantViolations(t, r, KindStatusMismatch,
		"ClusterQueue cq: status.flavorsReservation f/cpu total is 3, but workloads holding a reservation use 3500m",
		"ClusterQueue cq: status.flavorsReservation spot/cpu total is 1, but workloads holding a reservation use 0",
		"ClusterQueue cq: status.flavorsUsage f/cpu total is 0, but admitted workloads use 2500m",
		"ClusterQueue cq: status.reservingWorkloads is 1, but 2 workloads hold a reservation")

	cq.Status.AdmittedWorkloads = 0
	cq.Status.ReservingWorkloads = 2
	r = check(objects(cq, newFlavor("f"), newFlavor("spot"),
		newWorkload("a", 2, admitted("cq", "f", 2, usage{"cpu": "2500m"})),
		newWorkload("b", 1, reserving("cq", "f", 1, usage{"cpu": "1"})),
	))
	if got := ofKind(r, KindStatusMismatch); len(got) != 4 ||
		!slices.Contains(got, Violation{KindStatusMismatch, "ClusterQueue cq",
			"status.admittedWorkloads is 0, but 1 workloads are admitted"}) {
		t.Errorf("want the admittedWorkloads mismatch, got:\n%s", r)
	}
}

func TestReclaimablePods(t *testing.T) {
	cq := func(reserved, used string) *kueue.ClusterQueue {
		return withStatus(newClusterQueue("cq", "", quota{flavor: "f", res: "cpu", nominal: "2"}),
			flavorUsage("f", usage{"cpu": reserved}), flavorUsage("f", usage{"cpu": used}), 1, 1)
	}
	tests := []struct {
		name   string
		status *kueue.ClusterQueue
		wl     *kueue.Workload
	}{
		{"two of four pods reclaimable", cq("2", "2"),
			newWorkload("a", 4, admitted("cq", "f", 4, usage{"cpu": "4"}), reclaimable(2))},
		{"milli-units", cq("1", "1"),
			newWorkload("a", 3, admitted("cq", "f", 3, usage{"cpu": "1500m"}), reclaimable(1))},
		{"more reclaimable than pods", cq("0", "0"),
			newWorkload("a", 3, admitted("cq", "f", 3, usage{"cpu": "3"}), reclaimable(5))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := check(objects(tc.status, newFlavor("f"), tc.wl)); !r.OK() {
				t.Errorf("want no violations, got:\n%s", r)
			}
		})
	}
	// Without the reclaimable pods, the same workload is over quota and off
	// the status.
	r := check(objects(cq("2", "2"), newFlavor("f"),
		newWorkload("a", 4, admitted("cq", "f", 4, usage{"cpu": "4"}))))
	wantViolations(t, r, KindNominalQuotaExceeded,
		"ClusterQueue cq: without a cohort, uses 4 of f/cpu, above its nominal quota 2")
}

func TestQuotaLimits(t *testing.T) {
	cpu := func(nominal, bl, ll string) quota {
		return quota{flavor: "f", res: "cpu", nominal: nominal, bl: bl, ll: ll}
	}
	wl := func(name, cq, amount string) *kueue.Workload {
		return newWorkload(name, 1, reserving(cq, "f", 1, usage{"cpu": amount}))
	}
	tests := []struct {
		name string
		objs []any
		kind string
		want []string
	}{{
		name: "root cohort over its subtree quota",
		objs: []any{newCohort("root", ""), newClusterQueue("a", "root", cpu("4", "", "")),
			newClusterQueue("b", "root", cpu("4", "", "")), wl("w1", "a", "6"), wl("w2", "b", "4")},
		kind: KindQuotaExceeded,
		want: []string{"Cohort root: root cohort: its members draw 10 of f/cpu, above the subtree quota 8"},
	}, {
		name: "implicit root cohort",
		objs: []any{newClusterQueue("a", "ghost", cpu("4", "", "")), wl("w1", "a", "5")},
		kind: KindQuotaExceeded,
		want: []string{"Cohort ghost: root cohort: its members draw 5 of f/cpu, above the subtree quota 4"},
	}, {
		name: "cluster queue over its borrowing limit",
		objs: []any{newClusterQueue("a", "pool", cpu("4", "1", "")), newClusterQueue("b", "pool", cpu("10", "", "")),
			wl("w1", "a", "6")},
		kind: KindBorrowingLimitExceeded,
		want: []string{"ClusterQueue a: draws 6 of f/cpu from Cohort pool (usage 6, guaranteed 0), " +
			"above its lendable quota 4 + borrowingLimit 1 = 5"},
	}, {
		name: "cluster queue at its borrowing limit",
		objs: []any{newClusterQueue("a", "pool", cpu("4", "1", "")), newClusterQueue("b", "pool", cpu("10", "", "")),
			wl("w1", "a", "5")},
		kind: KindBorrowingLimitExceeded,
	}, {
		name: "lending limit keeps a guaranteed part",
		objs: []any{newClusterQueue("a", "pool", cpu("4", "1", "1")), newClusterQueue("b", "pool", cpu("10", "", "")),
			wl("w1", "a", "6")},
		kind: KindBorrowingLimitExceeded,
		want: []string{"ClusterQueue a: draws 3 of f/cpu from Cohort pool (usage 6, guaranteed 3), " +
			"above its lendable quota 1 + borrowingLimit 1 = 2"},
	}, {
		name: "cohort over its borrowing limit",
		objs: []any{newCohort("org", "", cpu("10", "", "")), newCohort("team", "org", cpu("0", "2", "")),
			newClusterQueue("a", "team", cpu("4", "", "")), wl("w1", "a", "7")},
		kind: KindBorrowingLimitExceeded,
		want: []string{"Cohort team: draws 7 of f/cpu from Cohort org (usage 7, guaranteed 0), " +
			"above its lendable quota 4 + borrowingLimit 2 = 6"},
	}, {
		name: "cohort within its borrowing limit",
		objs: []any{newCohort("org", "", cpu("10", "", "")), newCohort("team", "org", cpu("0", "2", "")),
			newClusterQueue("a", "team", cpu("4", "", "")), wl("w1", "a", "6")},
		kind: KindBorrowingLimitExceeded,
	}, {
		name: "cycle: inactive, not checked",
		objs: []any{newCohort("x", "y"), newCohort("y", "x"), newClusterQueue("a", "x", cpu("1", "", "")),
			wl("w1", "a", "50")},
		kind: KindQuotaExceeded,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := check(objects(append(tc.objs, newFlavor("f"))...))
			wantViolations(t, r, tc.kind, tc.want...)
			for _, v := range r.Violations {
				if v.Kind != tc.kind && v.Kind != KindStatusMismatch {
					t.Errorf("unexpected violation %s", v)
				}
			}
		})
	}
}

func TestLeftoverFinalizer(t *testing.T) {
	done := func(name string, finishedAgo, deletedAgo time.Duration) *kueue.Workload {
		return newWorkload(name, 1, finished(testNow.Add(-finishedAgo)), deleting(testNow.Add(-deletedAgo)))
	}
	owner := ownedBy("Job", "j", "uid-j")
	kept := func(wl *kueue.Workload) { wl.Finalizers = append(wl.Finalizers, kueue.ResourceInUseFinalizerName) }
	objs := objects(
		done("stuck", 10*time.Minute, 5*time.Minute),
		done("just-finished", 30*time.Second, 5*time.Minute),
		done("just-deleted", time.Hour, 59*time.Second),
		newWorkload("finished-kept", 1, owner, finished(testNow.Add(-2*time.Minute)), kept),
		newWorkload("finished-recently", 1, owner, finished(testNow.Add(-30*time.Second)), kept),
		newWorkload("orphan-deleted", 1, deleting(testNow.Add(-3*time.Minute))),
		newWorkload("pods-terminating", 1, owner, deleting(testNow.Add(-time.Hour))),
		newWorkload("running", 1, owner, kept),
	)
	r := Check(objs, Options{Now: func() time.Time { return testNow }})
	wantViolations(t, r, KindLeftoverFinalizer,
		"Workload ns/finished-kept: finished 2m0s ago, still has finalizer kueue.x-k8s.io/resource-in-use (grace 1m0s)",
		"Workload ns/orphan-deleted: deleted with no owner 3m0s ago, still has finalizer kueue.x-k8s.io/resource-in-use (grace 1m0s)",
		"Workload ns/stuck: finished and deleted 5m0s ago, still has finalizer kueue.x-k8s.io/resource-in-use (grace 1m0s)")
	if len(r.Violations) != 3 {
		t.Errorf("want 3 violations, got:\n%s", r)
	}
	r = Check(objs, Options{FinalizerGrace: 10 * time.Minute, Now: func() time.Time { return testNow }})
	if !r.OK() {
		t.Errorf("with a 10m grace, want no violations, got:\n%s", r)
	}
}

func TestUnknownReferences(t *testing.T) {
	r := check(objects(newFlavor("f"),
		newWorkload("a", 1, reserving("ghost", "f", 1, usage{"cpu": "1"})),
		newWorkload("b", 1, reserving("ghost", "gone", 1, usage{"cpu": "1", "memory": "1Gi"})),
	))
	wantViolations(t, r, KindUnknownReference,
		`Workload ns/a: holds quota in ClusterQueue "ghost", which does not exist`,
		`Workload ns/b: holds quota in ClusterQueue "ghost", which does not exist`,
		"Workload ns/b: holds quota of ResourceFlavor gone, which does not exist")
}

func TestReportString(t *testing.T) {
	r := &Report{Workloads: 2, Violations: []Violation{
		{KindStatusMismatch, "ClusterQueue cq", "status.reservingWorkloads is 0, but 1 workloads hold a reservation"},
	}}
	want := "Audited 2 workloads, 0 cluster queues, 0 cohorts, 0 resource flavors: 1 violation.\n" +
		"  [StatusMismatch] ClusterQueue cq: status.reservingWorkloads is 0, but 1 workloads hold a reservation\n"
	if r.String() != want {
		t.Errorf("String() =\n%s\nwant\n%s", r, want)
	}
	r.Violations = append(r.Violations, r.Violations[0])
	if r.OK() || r.Summary() != "2 violations" {
		t.Errorf("OK() = %v, Summary() = %q", r.OK(), r.Summary())
	}
}
