package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Action is the kind of the next lifecycle step.
type Action int

const (
	// None: nothing to do.
	None Action = iota
	// Wait: nothing to do now; decide again after Step.After.
	Wait
	// SetPending writes QuotaReserved=False with Reason and Message.
	SetPending
	// MarkInactive records that a pending workload is deactivated:
	// Evicted=True (Deactivated), QuotaReserved=False and Requeued=False
	// saying so, requeueState cleared.
	MarkInactive
	// Deactivate sets spec.active=false on a workload marked as a
	// deactivation target.
	Deactivate
	// MarkForDeactivation writes DeactivationTarget=True with Cause (as
	// its reason) and Message.
	MarkForDeactivation
	// Evict writes Evicted=True with Reason, Cause and Message; Backoff
	// says how the requeue is delayed.
	Evict
	// ClearReservation gives back the quota of an evicted workload that has
	// no job to stop.
	ClearReservation
	// Requeue writes Requeued=True with Reason and Message (and clears
	// requeueState when ResetRequeueState).
	Requeue
	// SyncChecks keeps status.admissionChecks in line with Checks and sets
	// Admitted=True once all are Ready; decide again after After when set.
	SyncChecks
	// DropFinalizer removes the resource-in-use finalizer from a workload
	// deleted with no job (a job's integration removes it once the job's
	// pods are gone).
	DropFinalizer
	// DeleteWorkload deletes a finished workload past its retention.
	DeleteWorkload
	// DeleteJob deletes the job (the controller owner) of a workload Kuota
	// deactivated, past its retention; the deletion cascades.
	DeleteJob
	// ReplaceNodes gives the pods placed on the failed Nodes other nodes
	// (Options.ReplaceFailedNodes); when none has room, the workload is
	// evicted as Evict would, with Reason and Message.
	ReplaceNodes
)

var actionNames = [...]string{"None", "Wait", "SetPending", "MarkInactive", "Deactivate", "MarkForDeactivation", "Evict",
	"ClearReservation", "Requeue", "SyncChecks", "DropFinalizer", "DeleteWorkload", "DeleteJob", "ReplaceNodes"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Confirm names what the controller must confirm against the API server
// before a SetPending step: the cache may lag behind a queue just created.
type Confirm int

const (
	ConfirmNothing Confirm = iota
	ConfirmLocalQueueMissing
	ConfirmClusterQueueMissing
)

// EvictBackoff says how an eviction delays the workload's return.
type EvictBackoff int

const (
	// NoBackoff: requeued as the eviction reason allows.
	NoBackoff EvictBackoff = iota
	// PodsReadyBackoff counts a requeue in requeueState with the
	// waitForPodsReady backoff.
	PodsReadyBackoff
	// RetryChecksBackoff resets the checks that asked for a retry and
	// waits the longest requeueAfterSeconds they asked for.
	RetryChecksBackoff
)

// Step is the next thing to do to a workload.
type Step struct {
	Action  Action
	Reason  string
	Cause   kueue.EvictionUnderlyingCause
	Message string
	// EventReason, when set, names a Warning event to emit with Message
	// once the step is written.
	EventReason       string
	Confirm           Confirm
	Backoff           EvictBackoff
	ResetRequeueState bool
	Checks            []kueue.AdmissionCheckReference
	After             time.Duration
	// Nodes names the failed nodes of a NodeFailures eviction
	// (status.unhealthyNodes).
	Nodes []string
}

// Messages of the deactivation markers Kuota sets.
const (
	MsgRequeuingLimit   = "exceeding the maximum number of re-queuing retries"
	MsgMaxExecutionTime = "exceeding the maximum execution time"
	MsgDeactivated      = "The workload is deactivated"
)

// Next decides the next step of a workload's lifecycle at time now.
func Next(wl *kueue.Workload, v *View, opts *Options, now time.Time) Step {
	switch {
	case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
		return finishedStep(wl, opts.Retention, now)
	case !wl.DeletionTimestamp.IsZero() && len(wl.OwnerReferences) == 0:
		if slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) {
			return Step{Action: DropFinalizer}
		}
		return Step{}
	case !wl.DeletionTimestamp.IsZero() && !Reserved(wl):
		return Step{}
	}
	if err := CheckPodSets(wl); err != nil {
		if Reserved(wl) || pendingFor(wl, kueue.WorkloadReasonMisconfigured) {
			// A reservation made with such PodSets (by another writer) is
			// left alone: the workload's job owns what runs.
			return Step{}
		}
		return Step{Action: SetPending, Reason: kueue.WorkloadReasonMisconfigured, Message: "Invalid workload: " + err.Error(),
			EventReason: kueue.WorkloadReasonMisconfigured}
	}
	if deactivationPending(wl) {
		return Step{Action: Deactivate}
	}
	if Reserved(wl) {
		return nextReserved(wl, v, opts, now)
	}
	return nextPending(wl, v, opts, now)
}

// pendingFor reports QuotaReserved=False with the reason.
func pendingFor(wl *kueue.Workload, reason string) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason
}

func nextReserved(wl *kueue.Workload, v *View, opts *Options, now time.Time) Step {
	if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
		if len(wl.OwnerReferences) > 0 {
			// The job stops its pods, then clears the reservation.
			return Step{}
		}
		return Step{Action: ClearReservation}
	}
	if s, due := evictionDue(wl, v); due {
		return s
	}
	s, after := timeouts(wl, opts, now)
	if s.Action != None {
		return s
	}
	s, recheck := nodeFailures(v, opts, now)
	if s.Action != None {
		return s
	}
	return checksStep(wl, v, minPositive(after, recheck))
}

// evictionDue says whether the workload must give up its quota now: it was
// deactivated, or its ClusterQueue or LocalQueue is drained (HoldAndDrain),
// or (Hold) it only reserves quota and is not admitted yet.
func evictionDue(wl *kueue.Workload, v *View) (Step, bool) {
	if !Active(wl) {
		s := Step{Action: Evict, Reason: kueue.WorkloadEvictedByDeactivation, Message: MsgDeactivated}
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget); c != nil && c.Status == metav1.ConditionTrue {
			s.Cause, s.Message = kueue.EvictionUnderlyingCause(c.Reason), MsgDeactivated+": "+c.Message
		}
		return s, true
	}
	admitted := meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
	cqName := wl.Status.Admission.ClusterQueue
	if v.AdmittedIn != nil && stops(v.AdmittedIn.StopPolicy, admitted) {
		return Step{Action: Evict, Reason: kueue.WorkloadEvictedByClusterQueueStopped,
			Message: fmt.Sprintf("The ClusterQueue %s is stopped", cqName)}, true
	}
	if stops(v.LocalQueueStop, admitted) {
		return Step{Action: Evict, Reason: kueue.WorkloadEvictedByLocalQueueStopped,
			Message: fmt.Sprintf("The LocalQueue %s is stopped", wl.Spec.QueueName)}, true
	}
	return Step{}, false
}

// stops: HoldAndDrain evicts everything; Hold only cancels reservations
// that are not admitted yet.
func stops(p kueue.StopPolicy, admitted bool) bool {
	return p == kueue.HoldAndDrain || (p == kueue.Hold && !admitted)
}

// timeouts evicts or deactivates an admitted workload that ran past its
// maximum execution time or whose pods did not become ready in time.
// Otherwise it returns when the nearest deadline passes (0: none).
func timeouts(wl *kueue.Workload, opts *Options, now time.Time) (Step, time.Duration) {
	admitted := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if admitted == nil || admitted.Status != metav1.ConditionTrue {
		return Step{}, 0
	}
	var next time.Duration
	soonest := func(d time.Duration) {
		if next == 0 || d < next {
			next = d
		}
	}
	if limit := wl.Spec.MaximumExecutionTimeSeconds; limit != nil {
		ran := time.Duration(ptr.Deref(wl.Status.AccumulatedPastExecutionTimeSeconds, 0))*time.Second + now.Sub(admitted.LastTransitionTime.Time)
		left := time.Duration(*limit)*time.Second - ran
		if left <= 0 {
			return Step{Action: MarkForDeactivation, Cause: kueue.WorkloadMaximumExecutionTimeExceeded, Message: MsgMaxExecutionTime,
				EventReason: string(kueue.WorkloadMaximumExecutionTimeExceeded)}, 0
		}
		soonest(left)
	}
	if pr := opts.PodsReady; pr != nil {
		since, timeout, cause := admitted.LastTransitionTime.Time, pr.Timeout, kueue.WorkloadWaitForStart
		ready := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
		switch {
		case ready != nil && ready.Status == metav1.ConditionTrue:
			timeout = 0
		case ready != nil && ready.Reason == string(kueue.WorkloadWaitForRecovery):
			since, timeout, cause = ready.LastTransitionTime.Time, pr.RecoveryTimeout, kueue.WorkloadWaitForRecovery
		}
		if timeout > 0 {
			left := since.Add(timeout).Sub(now)
			if left <= 0 {
				return podsReadyTimeout(wl, pr, cause, timeout), 0
			}
			soonest(left)
		}
	}
	if next > 0 {
		next += 10 * time.Millisecond
	}
	return Step{}, next
}

// podsReadyTimeout evicts a workload whose pods were not ready in time,
// with a backoff, or deactivates it once requeues run out.
func podsReadyTimeout(wl *kueue.Workload, pr *PodsReadyOptions, cause kueue.EvictionUnderlyingCause, timeout time.Duration) Step {
	if pr.Backoff.Exceeded(&wl.Status) {
		return Step{Action: MarkForDeactivation, Cause: kueue.WorkloadRequeuingLimitExceeded, Message: MsgRequeuingLimit}
	}
	msg := fmt.Sprintf("Exceeded the PodsReady timeout %s", wl.Namespace+"/"+wl.Name)
	if cause == kueue.WorkloadWaitForRecovery {
		msg = fmt.Sprintf("Exceeded the PodsReady recovery timeout of %s", timeout)
	}
	return Step{Action: Evict, Reason: kueue.WorkloadEvictedByPodsReadyTimeout, Cause: cause, Message: msg, Backoff: PodsReadyBackoff}
}

// checksStep acts on the admission checks: a Rejected one deactivates the
// workload, a Retry evicts it, otherwise the checks are kept in line.
func checksStep(wl *kueue.Workload, v *View, after time.Duration) Step {
	for _, s := range wl.Status.AdmissionChecks {
		switch s.State {
		case kueue.CheckStateRejected:
			return Step{Action: MarkForDeactivation, Cause: kueue.WorkloadAdmissionCheckCause,
				Message:     fmt.Sprintf("Admission check %s rejected the workload: %s", s.Name, s.Message),
				EventReason: "AdmissionCheckRejected"}
		case kueue.CheckStateRetry:
			return Step{Action: Evict, Reason: kueue.WorkloadEvictedByAdmissionCheck, Backoff: RetryChecksBackoff,
				Message: fmt.Sprintf("Admission check %s asks for a retry: %s", s.Name, s.Message)}
		}
	}
	if v.AdmittedIn == nil {
		return waitStep(after)
	}
	return Step{Action: SyncChecks, Checks: ApplicableChecks(v.AdmittedIn, wl.Status.Admission), After: after}
}

func waitStep(after time.Duration) Step {
	if after > 0 {
		return Step{Action: Wait, After: after}
	}
	return Step{}
}

// nextPending decides for a workload without a reservation.
func nextPending(wl *kueue.Workload, v *View, opts *Options, now time.Time) Step {
	if !Active(wl) {
		if inactiveMarked(wl) {
			return deactivatedStep(wl, opts.Retention, now)
		}
		return Step{Action: MarkInactive, Reason: kueue.WorkloadEvictedByDeactivation, Message: MsgDeactivated}
	}
	if stopped(v.LocalQueueStop) {
		if pendingFor(wl, kueue.WorkloadReasonSuspended) {
			return Step{}
		}
		return Step{Action: SetPending, Reason: kueue.WorkloadReasonSuspended,
			Message: fmt.Sprintf("LocalQueue %s is stopped (stopPolicy %s)", wl.Spec.QueueName, v.LocalQueueStop)}
	}
	if s, gated := requeueGate(wl, v, now); gated {
		return s
	}
	switch {
	case !v.LocalQueueKnown:
		return misconfigured(wl, fmt.Sprintf("LocalQueue %s doesn't exist", wl.Spec.QueueName), ConfirmLocalQueueMissing)
	case v.ClusterQueue == nil:
		return misconfigured(wl, fmt.Sprintf("ClusterQueue %s doesn't exist", v.ClusterQueueName), ConfirmClusterQueueMissing)
	}
	if gates := AdmissionGates(wl); len(gates) > 0 {
		return keptOut(wl, kueue.WorkloadReasonAdmissionGated, gatedMessage(gates), ConfirmNothing)
	}
	if msg := CheckResources(wl, v.LimitRanges); msg != "" {
		return keptOut(wl, kueue.WorkloadReasonPending, msg, ConfirmNothing)
	}
	if msg := CheckClaims(wl, v.Claims); msg != "" {
		return keptOut(wl, kueue.WorkloadReasonInadmissible, msg, ConfirmNothing)
	}
	return Step{}
}

func misconfigured(wl *kueue.Workload, msg string, confirm Confirm) Step {
	return keptOut(wl, kueue.WorkloadReasonMisconfigured, msg, confirm)
}

// keptOut says, once, with QuotaReserved=False and a Warning event of the
// same reason, why a pending workload is kept out of its queue.
func keptOut(wl *kueue.Workload, reason, msg string, confirm Confirm) Step {
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason == reason && c.Message == msg {
		return Step{}
	}
	return Step{Action: SetPending, Reason: reason, Message: msg, Confirm: confirm, EventReason: reason}
}

// inactiveMarked reports whether a pending inactive workload already says
// so: Evicted=True for a deactivation, and no reason of its own to wait.
func inactiveMarked(wl *kueue.Workload) bool {
	ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if ev == nil || ev.Status != metav1.ConditionTrue || !strings.HasPrefix(ev.Reason, kueue.WorkloadEvictedByDeactivation) {
		return false
	}
	rq := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)
	if rq == nil || rq.Status != metav1.ConditionFalse || !strings.HasPrefix(rq.Reason, kueue.WorkloadEvictedByDeactivation) {
		return false
	}
	qr := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	return qr == nil || qr.Reason == kueue.WorkloadReasonPending || strings.HasPrefix(qr.Reason, kueue.WorkloadEvictedByDeactivation)
}

// requeueGate decides whether a pending workload whose reservation was
// cleared may queue again (Requeued=False says it may not yet). When what
// held it back is resolved it returns the Requeue step with the matching
// reason; until then it keeps the workload out of the queues.
func requeueGate(wl *kueue.Workload, v *View, now time.Time) (Step, bool) {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)
	if c == nil || c.Status != metav1.ConditionFalse {
		return Step{}, false
	}
	switch {
	case strings.HasPrefix(c.Reason, kueue.WorkloadEvictedByDeactivation):
		// Active again (inactive workloads never get here).
		return Step{Action: Requeue, Reason: kueue.WorkloadReactivated, Message: "The workload was reactivated", ResetRequeueState: true}, true
	case c.Reason == kueue.WorkloadEvictedByClusterQueueStopped:
		if v.ClusterQueue == nil || stopped(v.ClusterQueue.StopPolicy) {
			return Step{}, true
		}
		return Step{Action: Requeue, Reason: kueue.WorkloadClusterQueueRestarted, Message: "The ClusterQueue was restarted after being stopped"}, true
	case c.Reason == kueue.WorkloadEvictedByLocalQueueStopped:
		// The LocalQueue runs (a stopped one was handled before).
		return Step{Action: Requeue, Reason: kueue.WorkloadLocalQueueRestarted, Message: "The LocalQueue was restarted after being stopped"}, true
	}
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		if wait := rs.RequeueAt.Sub(now); wait > 0 {
			return Step{Action: Wait, After: wait + 10*time.Millisecond}, true
		}
	}
	return Step{Action: Requeue, Reason: kueue.WorkloadBackoffFinished, Message: "The workload backoff was finished"}, true
}
