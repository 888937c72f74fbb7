// Package audit checks, from the objects an API server holds, the invariants
// Kuota promises (DESIGN.md section 5) and reports every violation:
//
//   - no workload admitted twice: two unfinished Workloads of the same owner
//     (controller ownerReference UID or the kueue.x-k8s.io/job-uid label)
//     holding quota, status.admission without QuotaReserved=True (or the
//     reverse), Admitted=True without QuotaReserved=True;
//   - ClusterQueue status matches the workloads: flavorsReservation,
//     flavorsUsage, reservingWorkloads and admittedWorkloads equal what the
//     unfinished workloads holding quota in the queue add up to, reclaimable
//     pods deducted;
//   - usage within quota and limits, per (flavor, resource): no root of the
//     cohort tree uses more than its subtree quota, no node draws more from
//     its parent than its lendable quota plus its borrowing limit, and a
//     ClusterQueue without a cohort stays within its nominal quota;
//   - no finalizer left behind: a finished Workload, or one being deleted
//     with no owner, does not keep kueue.x-k8s.io/resource-in-use past a
//     grace period;
//   - quota is held only in ClusterQueues and ResourceFlavors that exist;
//   - no pod of a managed job runs without an admitted Workload (pods.go);
//   - no Workload holds quota once its job is gone and none of its pods
//     runs.
//
// The audit only reads. Run lists the objects (List); the checks
// themselves are pure functions of the listed objects (Check). The pod
// checks list every pod and the metadata of the jobs of the Workloads
// holding quota; Options.SkipPods leaves them out on huge clusters.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	wlpkg "github.com/kuota-dev/kuota/internal/workload"
)

// Violation kinds.
const (
	// KindDoubleAdmission: two unfinished Workloads of one owner hold quota.
	KindDoubleAdmission = "DoubleAdmission"
	// KindInconsistentReservation: status.admission and QuotaReserved disagree.
	KindInconsistentReservation = "InconsistentReservation"
	// KindAdmittedWithoutReservation: Admitted=True but QuotaReserved is not True.
	KindAdmittedWithoutReservation = "AdmittedWithoutReservation"
	// KindStatusMismatch: a ClusterQueue's status disagrees with its workloads.
	KindStatusMismatch = "StatusMismatch"
	// KindQuotaExceeded: a root of the cohort tree uses more than its subtree quota.
	KindQuotaExceeded = "QuotaExceeded"
	// KindNominalQuotaExceeded: a ClusterQueue without cohort uses more than
	// its nominal quota.
	KindNominalQuotaExceeded = "NominalQuotaExceeded"
	// KindBorrowingLimitExceeded: a node draws more from its parent than its
	// borrowing limit allows.
	KindBorrowingLimitExceeded = "BorrowingLimitExceeded"
	// KindUnknownReference: a workload holds quota in a ClusterQueue or
	// flavor that does not exist.
	KindUnknownReference = "UnknownReference"
	// KindInvalidObject: an object could not be read into the quota model.
	KindInvalidObject = "InvalidObject"
	// KindLeftoverFinalizer: a finished Workload, or one being deleted with
	// no owner, still carries the resource-in-use finalizer after the grace
	// period.
	KindLeftoverFinalizer = "LeftoverFinalizer"
	// KindPodWithoutAdmission: a pod of a managed job runs, or may run,
	// while its Workload is not admitted or does not exist.
	KindPodWithoutAdmission = "PodWithoutAdmission"
	// KindQuotaOfGoneJob: a Workload holds quota, its job is gone and none
	// of its pods runs.
	KindQuotaOfGoneJob = "QuotaOfGoneJob"
)

// JobUIDLabel names the UID of the job a Workload was created for.
const JobUIDLabel = wlpkg.JobUIDLabel

// DefaultFinalizerGrace is how long a finished Workload, or one deleted with
// no owner, may keep its finalizer before the audit reports it.
const DefaultFinalizerGrace = time.Minute

// listPageSize bounds each List call so that large clusters are read in pages.
const listPageSize = 500

// Violation is one broken invariant.
type Violation struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Object names the object at fault, e.g. "Workload ns/name",
	// "ClusterQueue name" or "Cohort name".
	Object string
	// Message says what is wrong, with the numbers involved.
	Message string
}

// String renders the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("[%s] %s: %s", v.Kind, v.Object, v.Message)
}

// Report is the outcome of an audit.
type Report struct {
	// Counts of the objects read.
	Workloads, ClusterQueues, Cohorts, ResourceFlavors int
	// Pods is the number of pods of managed jobs read; PodsChecked says
	// whether pods were read at all.
	Pods        int
	PodsChecked bool
	// Violations found, ordered by kind, object and message.
	Violations []Violation
}

// OK reports whether no invariant is broken.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// String renders a summary line followed by one line per violation.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Audited %d workloads, %d cluster queues, %d cohorts, %d resource flavors",
		r.Workloads, r.ClusterQueues, r.Cohorts, r.ResourceFlavors)
	if r.PodsChecked {
		fmt.Fprintf(&b, ", %d pods of managed jobs", r.Pods)
	}
	b.WriteString(": ")
	fmt.Fprintf(&b, "%s.\n", r.Summary())
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}

// Summary counts the violations: "no violations", "1 violation", "3 violations".
func (r *Report) Summary() string {
	switch n := len(r.Violations); n {
	case 0:
		return "no violations"
	case 1:
		return "1 violation"
	default:
		return fmt.Sprintf("%d violations", n)
	}
}

// Options tune the audit.
type Options struct {
	// FinalizerGrace is how long a finished Workload, or one deleted with no
	// owner, may keep the resource-in-use finalizer; DefaultFinalizerGrace
	// when zero.
	FinalizerGrace time.Duration
	// PodGrace is how long a pod may run after its Workload lost its
	// admission, and a deleted Workload whose job is gone may hold quota;
	// DefaultPodGrace when zero.
	PodGrace time.Duration
	// SkipPods leaves out the checks that read pods and jobs.
	SkipPods bool
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// Objects are the objects an audit looks at.
type Objects struct {
	Workloads       []kueue.Workload
	ClusterQueues   []kueue.ClusterQueue
	Cohorts         []kueue.Cohort
	ResourceFlavors []kueue.ResourceFlavor
	// Pods are the pods of managed jobs; PodsListed says they were read
	// (the pod checks run only then).
	Pods       []Pod
	PodsListed bool
	// PodsListedAt is when the pods began to be read (List reads them
	// before the Workloads); the pod checks judge admissions at that time.
	// Zero means Options.Now.
	PodsListedAt time.Time
	// JobExists says, per Workload holding quota ("ns/name"), whether its
	// job still exists; a Workload not in it is not checked (a pod group's
	// job is its pods, read from Pods).
	JobExists map[string]bool
}

// Run audits the cluster behind c with default options.
func Run(ctx context.Context, c client.Reader) (*Report, error) {
	return RunWithOptions(ctx, c, Options{})
}

// RunWithOptions lists Workloads (all namespaces), ClusterQueues, Cohorts
// and ResourceFlavors, and unless o.SkipPods pods and the jobs of the
// Workloads holding quota, through c and audits them.
func RunWithOptions(ctx context.Context, c client.Reader, o Options) (*Report, error) {
	objs, err := List(ctx, c, o)
	if err != nil {
		return nil, err
	}
	return Check(objs, o), nil
}

// List reads every object the audit needs (pods and jobs unless
// o.SkipPods).
func List(ctx context.Context, c client.Reader, o Options) (*Objects, error) {
	var (
		objs Objects
		wls  kueue.WorkloadList
		cqs  kueue.ClusterQueueList
		chs  kueue.CohortList
		rfs  kueue.ResourceFlavorList
	)
	// Pods first: a pod seen running was admitted before it was listed, so
	// the Workloads read afterwards show that admission or its loss. Read
	// the other way round, a Workload admitted between the two lists looks
	// unadmitted next to its running pods.
	var err error
	if !o.SkipPods {
		objs.PodsListedAt = time.Now()
		objs.Pods, err = listPods(ctx, c)
		objs.PodsListed = err == nil
	}
	if err == nil {
		err = listAll(ctx, c, &wls, "workloads", func() { objs.Workloads = append(objs.Workloads, wls.Items...) })
	}
	if err == nil {
		err = listAll(ctx, c, &cqs, "clusterqueues", func() { objs.ClusterQueues = append(objs.ClusterQueues, cqs.Items...) })
	}
	if err == nil {
		err = listAll(ctx, c, &chs, "cohorts", func() { objs.Cohorts = append(objs.Cohorts, chs.Items...) })
	}
	if err == nil {
		err = listAll(ctx, c, &rfs, "resourceflavors", func() {
			objs.ResourceFlavors = append(objs.ResourceFlavors, rfs.Items...)
		})
	}
	if err == nil && !o.SkipPods {
		objs.JobExists, err = readJobs(ctx, c, objs.Workloads, objs.Pods)
	}
	if err != nil {
		return nil, err
	}
	return &objs, nil
}

// listAll pages through a list, calling collect after each page.
func listAll(ctx context.Context, c client.Reader, list client.ObjectList, what string, collect func()) error {
	token := ""
	for {
		opts := []client.ListOption{client.Limit(listPageSize)}
		if token != "" {
			opts = append(opts, client.Continue(token))
		}
		if err := c.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing %s: %w", what, err)
		}
		collect()
		token = list.GetContinue()
		if token == "" {
			return nil
		}
	}
}

// Check audits listed objects. It is pure apart from reading o.Now.
func Check(objs *Objects, o Options) *Report {
	if o.FinalizerGrace == 0 {
		o.FinalizerGrace = DefaultFinalizerGrace
	}
	if o.PodGrace == 0 {
		o.PodGrace = DefaultPodGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	wls := classify(objs.Workloads)
	var vs []Violation
	vs = append(vs, checkConsistency(wls)...)
	vs = append(vs, checkDoubleAdmission(wls)...)
	vs = append(vs, checkReferences(wls, objs.ClusterQueues, objs.ResourceFlavors)...)
	vs = append(vs, checkStatus(wls, objs.ClusterQueues)...)
	vs = append(vs, checkQuota(wls, objs.ClusterQueues, objs.Cohorts)...)
	vs = append(vs, checkFinalizers(wls, o.FinalizerGrace, o.Now())...)
	if objs.PodsListed {
		ix := newPodIndex(wls)
		podsAt := objs.PodsListedAt
		if podsAt.IsZero() {
			podsAt = o.Now()
		}
		vs = append(vs, checkPods(objs.Pods, ix, o.PodGrace, podsAt)...)
		vs = append(vs, checkGoneJobs(wls, objs.Pods, ix, objs.JobExists, o.PodGrace, o.Now(), podsAt)...)
	}
	slices.SortStableFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Message, b.Message))
	})
	return &Report{
		Workloads:       len(objs.Workloads),
		ClusterQueues:   len(objs.ClusterQueues),
		Cohorts:         len(objs.Cohorts),
		ResourceFlavors: len(objs.ResourceFlavors),
		Pods:            len(objs.Pods),
		PodsChecked:     objs.PodsListed,
		Violations:      vs,
	}
}
