package why

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/sim"
	"github.com/kuota-dev/kuota/internal/state"
)

// Status values of an Explanation.
const (
	StatusPending       = "Pending"
	StatusQuotaReserved = "QuotaReserved"
	StatusAdmitted      = "Admitted"
	StatusFinished      = "Finished"
)

// Causes of a Blocker.
const (
	CauseDeactivated          = "Deactivated"
	CauseLocalQueueMissing    = "LocalQueueMissing"
	CauseLocalQueueStopped    = "LocalQueueStopped"
	CauseClusterQueueMissing  = "ClusterQueueMissing"
	CauseClusterQueueInactive = "ClusterQueueInactive"
	CauseNamespaceNotSelected = "NamespaceNotSelected"
	CauseChecksPending        = "AdmissionChecksPending"
	CauseBackoff              = "Backoff"
	CauseSetAside             = "SetAside"
	CauseBlockedByHead        = "BlockedByStrictFIFOHead"
	CauseQuota                = "InsufficientQuota"
	CauseNoMatchingFlavor     = "NoMatchingFlavor"
	CauseExceedsQuota         = "ExceedsMaxQuota"
	CausePreempting           = "WaitingForPreemptedWorkloads"
	CauseTopology             = "TopologyPlacementFailed"
)

// Explanation is the answer for one Workload.
type Explanation struct {
	Workload     string `json:"workload"`
	LocalQueue   string `json:"localQueue"`
	ClusterQueue string `json:"clusterQueue,omitempty"`
	Priority     int32  `json:"priority"`
	Status       string `json:"status"`
	// Blockers are what keeps the workload from being admitted, the
	// first the most fundamental; none for a workload that fits now.
	Blockers []Blocker `json:"blockers,omitempty"`
	// FitsNow is set when the scheduler would admit it in its next cycle.
	FitsNow bool `json:"fitsNow,omitempty"`
	// Ahead is how many pending workloads its ClusterQueue considers
	// before it, AheadInLocalQueue how many of them are in its LocalQueue
	// (the pending-workloads API's positions); nil when it is not queued.
	Ahead             *int `json:"ahead,omitempty"`
	AheadInLocalQueue *int `json:"aheadInLocalQueue,omitempty"`
	// Flavors are the flavors the scheduler tried, per resource.
	Flavors    map[string]string `json:"flavors,omitempty"`
	Resources  []Resource        `json:"resources,omitempty"`
	Preemption *Preemption       `json:"preemption,omitempty"`
	Estimate   *Estimate         `json:"estimate,omitempty"`
}

// Blocker is one reason the workload waits.
type Blocker struct {
	Cause   string `json:"cause"`
	Message string `json:"message"`
}

// Options tune Explain.
type Options struct {
	// Scheduling are the scheduler's options (the preemption patience).
	Scheduling scheduling.Options
	// NoEstimate skips the simulation that estimates the start.
	NoEstimate bool
	// DefaultRuntime is assumed for a workload whose runtime nothing
	// tells (default: an hour).
	DefaultRuntime time.Duration
	// Lifecycle says how Workloads become records (the manager's
	// Configuration: transformations, DRA mappings); nil: the defaults.
	Lifecycle *lifecycle.Options
	// FairAdmission is the manager's admission fair sharing; nil: off.
	FairAdmission *afs.Params
}

// lifecycleOptions returns the options Workloads become records with.
func (o *Options) lifecycleOptions() lifecycle.Options {
	if o.Lifecycle != nil {
		return *o.Lifecycle
	}
	return lifecycle.Options{RequeueAtEvictionTime: true}
}

// Explain explains the Workload namespace/name in st.
func Explain(st *State, namespace, name string, opts Options) (*Explanation, error) {
	idx := slices.IndexFunc(st.Workloads, func(w kueue.Workload) bool { return w.Namespace == namespace && w.Name == name })
	if idx < 0 {
		return nil, fmt.Errorf("workload %s/%s not found", namespace, name)
	}
	wl := &st.Workloads[idx]
	ex := &Explanation{Workload: namespace + "/" + name, LocalQueue: namespace + "/" + string(wl.Spec.QueueName), Status: StatusPending}
	if wl.Spec.Priority != nil {
		ex.Priority = *wl.Spec.Priority
	}
	lq := findLocalQueue(st, namespace, string(wl.Spec.QueueName))
	if lq != nil {
		ex.ClusterQueue = string(lq.Spec.ClusterQueue)
	}
	switch {
	case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
		ex.Status = StatusFinished
		return ex, nil
	case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted):
		ex.Status = StatusAdmitted
		ex.ClusterQueue, ex.Flavors = admittedFlavors(wl)
		return ex, nil
	case lifecycle.Reserved(wl):
		ex.Status = StatusQuotaReserved
		ex.ClusterQueue, ex.Flavors = admittedFlavors(wl)
		ex.Blockers = append(ex.Blockers, pendingChecks(wl))
		return ex, nil
	}

	setup := setupOf(st)
	lcOpts := opts.lifecycleOptions()
	if st.ClaimTemplatesUnknown {
		lcOpts.DeviceClasses = nil // claims cannot be resolved: not charged
	}
	c := cache.New(lcOpts)
	c.SetAdmissionFairSharing(opts.FairAdmission)
	if err := sim.LoadSetup(c, setup); err != nil {
		return nil, err
	}
	for i := range st.LocalQueues {
		// The usage the manager published orders admission fair sharing.
		c.SetLocalQueueFairSharing(&st.LocalQueues[i])
	}
	for i := range st.LimitRanges {
		c.SetLimitRange(st.LimitRanges[i].Namespace, st.LimitRanges[i].Name, st.LimitRanges[i].Spec)
	}
	for i := range st.ClaimTemplates {
		t := &st.ClaimTemplates[i]
		c.SetClaimTemplate(t.Namespace, t.Name, lifecycle.NewClaimTemplate(&t.Spec))
	}
	for i := range st.Workloads {
		c.UpsertWorkload(&st.Workloads[i])
	}
	snap, queues := c.Snapshot(st.Now.UnixNano())
	ex.Blockers = append(ex.Blockers, staticBlockers(st, wl, lq, snap)...)
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if place, _ := c.Placement(key); place == lifecycle.Aside && len(ex.Blockers) == 0 {
		ex.Blockers = append(ex.Blockers, setAside(wl, c.View(wl)))
	}
	if len(ex.Blockers) > 0 || lq == nil {
		return ex, nil
	}
	res := scheduling.Decide(snap, queues, opts.Scheduling)
	ex.Ahead, ex.AheadInLocalQueue = ahead(c, lq.Spec.ClusterQueue, key)
	explainDecision(ex, res, key, snap.ClusterQueues[lq.Spec.ClusterQueue])
	if st.TopologyUnknown {
		for i := range ex.Blockers {
			if ex.Blockers[i].Cause == CauseTopology {
				ex.Blockers[i].Message += " (the nodes, pods or Topologies could not be listed with these credentials, so no topology capacity is known)"
			}
		}
	}
	ex.Resources = resourcesOf(snap, lq.Spec.ClusterQueue, wl, ex.Flavors)
	if !opts.NoEstimate && !ex.FitsNow {
		est, err := estimate(st, setup, key, opts)
		if err != nil {
			// The explanation stands without an estimate.
			est = &Estimate{Assumption: "no estimate: " + err.Error()}
		}
		ex.Estimate = est
	}
	return ex, nil
}

func findLocalQueue(st *State, ns, name string) *kueue.LocalQueue {
	for i := range st.LocalQueues {
		if st.LocalQueues[i].Namespace == ns && st.LocalQueues[i].Name == name {
			return &st.LocalQueues[i]
		}
	}
	return nil
}

func findClusterQueue(st *State, name kueue.ClusterQueueReference) *kueue.ClusterQueue {
	for i := range st.ClusterQueues {
		if st.ClusterQueues[i].Name == string(name) {
			return &st.ClusterQueues[i]
		}
	}
	return nil
}

// admittedFlavors reads the ClusterQueue and flavors of an admission.
func admittedFlavors(wl *kueue.Workload) (string, map[string]string) {
	adm := wl.Status.Admission
	if adm == nil {
		return "", nil
	}
	fl := map[string]string{}
	for _, psa := range adm.PodSetAssignments {
		for r, f := range psa.Flavors {
			fl[string(r)] = string(f)
		}
	}
	return string(adm.ClusterQueue), fl
}

// pendingChecks names the admission checks that are not Ready yet.
func pendingChecks(wl *kueue.Workload) Blocker {
	var waiting []string
	for _, ch := range wl.Status.AdmissionChecks {
		if ch.State != kueue.CheckStateReady {
			s := fmt.Sprintf("%s (%s)", ch.Name, ch.State)
			if ch.Message != "" {
				s += ": " + ch.Message
			}
			waiting = append(waiting, s)
		}
	}
	msg := "quota is reserved; waiting for admission checks: " + strings.Join(waiting, "; ")
	if len(waiting) == 0 {
		msg = "quota is reserved; the admission checks passed and admission is being recorded"
	}
	return Blocker{Cause: CauseChecksPending, Message: msg}
}

// staticBlockers are the causes that need no scheduling: the workload or
// its queues are off, or it is in backoff.
func staticBlockers(st *State, wl *kueue.Workload, lq *kueue.LocalQueue, snap *state.Snapshot) []Blocker {
	var out []Blocker
	if !lifecycle.Active(wl) {
		out = append(out, Blocker{CauseDeactivated, "spec.active is false: the workload is deactivated" + conditionNote(wl, kueue.WorkloadEvicted)})
	}
	if lq == nil {
		return append(out, Blocker{CauseLocalQueueMissing, fmt.Sprintf("LocalQueue %s does not exist in namespace %s", wl.Spec.QueueName, wl.Namespace)})
	}
	if p := lq.Spec.StopPolicy; p != nil && *p != kueue.None {
		out = append(out, Blocker{CauseLocalQueueStopped, fmt.Sprintf("LocalQueue %s/%s is stopped (stopPolicy %s)", lq.Namespace, lq.Name, *p)})
	}
	cq := findClusterQueue(st, lq.Spec.ClusterQueue)
	if cq == nil {
		return append(out, Blocker{CauseClusterQueueMissing, fmt.Sprintf("ClusterQueue %s, which LocalQueue %s/%s points to, does not exist", lq.Spec.ClusterQueue, lq.Namespace, lq.Name)})
	}
	if in, ok := snap.ClusterQueueInactive(lq.Spec.ClusterQueue); ok {
		out = append(out, Blocker{CauseClusterQueueInactive, fmt.Sprintf("ClusterQueue %s is inactive (%s): %s", cq.Name, in.Reason, in.Message)})
	}
	if scq := snap.ClusterQueues[lq.Spec.ClusterQueue]; scq != nil && !st.NamespacesUnknown && !snap.NamespaceAllowed(scq, wl.Namespace) {
		out = append(out, Blocker{CauseNamespaceNotSelected, fmt.Sprintf("ClusterQueue %s's namespaceSelector does not select namespace %s", cq.Name, wl.Namespace)})
	}
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil && rs.RequeueAt.After(st.Now) {
		out = append(out, Blocker{CauseBackoff, fmt.Sprintf("in backoff after %d eviction(s) until %s (%s from now)",
			derefCount(rs.Count), rs.RequeueAt.Format(time.RFC3339), rs.RequeueAt.Sub(st.Now).Round(time.Second))})
	}
	return out
}

func derefCount(c *int32) int32 {
	if c == nil {
		return 0
	}
	return *c
}

// conditionNote adds a condition's message, when the workload has it.
func conditionNote(wl *kueue.Workload, typ string) string {
	if c := meta.FindStatusCondition(wl.Status.Conditions, typ); c != nil && c.Status == metav1.ConditionTrue && c.Message != "" {
		return " (" + c.Message + ")"
	}
	return ""
}

// setAside explains a workload the queues keep out for its own state.
func setAside(wl *kueue.Workload, v lifecycle.View) Blocker {
	if err := lifecycle.CheckPodSets(wl); err != nil {
		return Blocker{CauseSetAside, "the workload is malformed: " + err.Error()}
	}
	if gates := lifecycle.AdmissionGates(wl); len(gates) > 0 {
		return Blocker{CauseSetAside, "its admission gates are not all removed: " + strings.Join(gates, ", ") +
			" (annotation " + kueue.AdmissionGatedByAnnotation + ")"}
	}
	if msg := lifecycle.CheckResources(wl, v.LimitRanges); msg != "" {
		return Blocker{CauseSetAside, "the API server would refuse its pods: " + msg}
	}
	if msg := lifecycle.CheckClaims(wl, v.Claims); msg != "" {
		return Blocker{CauseSetAside, "its DRA device claims cannot be charged to quota: " + msg}
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil && c.Status == metav1.ConditionFalse {
		return Blocker{CauseSetAside, "not requeued yet after its eviction: " + c.Message}
	}
	if !wl.DeletionTimestamp.IsZero() {
		return Blocker{CauseSetAside, "the workload is being deleted"}
	}
	return Blocker{CauseSetAside, "the scheduler keeps it out of the queue" + conditionNote(wl, kueue.WorkloadQuotaReserved)}
}

// ahead is the workload's place in its ClusterQueue and its LocalQueue, as
// the pending-workloads API gives them (the scheduler's order, parked and
// backoff workloads included); nil when it is not queued.
func ahead(c *cache.Cache, cq kueue.ClusterQueueReference, key types.NamespacedName) (inCQ, inLQ *int) {
	page, _ := c.PendingInClusterQueue(cq, 0, math.MaxInt)
	for _, p := range page {
		if p.Info.Key == key {
			a, b := int(p.InClusterQueue), int(p.InLocalQueue)
			return &a, &b
		}
	}
	return nil, nil
}
