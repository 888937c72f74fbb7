// Package provisioning decides the ProvisioningRequest admission check
// (controllerName kueue.x-k8s.io/provisioning-request): for a workload
// holding a quota reservation it asks cluster-autoscaler for nodes with a
// ProvisioningRequest, and turns the request's conditions into the
// check's state. It is pure: internal/controller/provisioning reads the
// objects, calls Decide and Build, and makes the writes.
package provisioning

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Pod annotations that make pods consume the capacity a request
// provisioned (cluster-autoscaler's names).
const (
	ConsumeAnnotation = "autoscaling.x-k8s.io/consume-provisioning-request"
	ClassAnnotation   = "autoscaling.x-k8s.io/provisioning-class-name"
)

// Condition types of a ProvisioningRequest (cluster-autoscaler's names).
const (
	Accepted        = "Accepted"
	Provisioned     = "Provisioned"
	Failed          = "Failed"
	BookingExpired  = "BookingExpired"
	CapacityRevoked = "CapacityRevoked"
)

// Request is what Decide reads of one ProvisioningRequest: its name, its
// conditions and its provisioningClassDetails. The package does not import
// cluster-autoscaler's API, whose package pulls in a test framework.
type Request struct {
	Name       string
	Conditions []metav1.Condition
	Details    map[string]string
}

// MsgNotNeeded is the Ready message of a check whose config manages no
// resource the workload asks for.
const MsgNotNeeded = "The provisioning request is not needed: no PodSet asks for a managed resource"

// Input is what Decide reads for one check of one workload.
type Input struct {
	Workload *kueue.Workload
	Check    kueue.AdmissionCheckReference
	// Config is the check's ProvisioningRequestConfig; nil when the check
	// is not active.
	Config *kueue.ProvisioningRequestConfigSpec
	// Requests are the workload's ProvisioningRequests of this check, by
	// attempt.
	Requests map[int32]*Request
	Now      time.Time
}

// Decision is what to do for one check of one workload.
type Decision struct {
	// Create asks for the current attempt's request (Build).
	Create bool
	// Attempt is the current attempt, from 1.
	Attempt int32
	// Delete lists requests to remove, with their PodTemplates: those of
	// earlier attempts, and all of them once the workload gave its quota
	// back.
	Delete []*Request
	// State is the check's new state; nil leaves it as it is.
	State *kueue.AdmissionCheckState
}

// Attempt is the attempt a check state is at: one more than its retries.
func Attempt(st *kueue.AdmissionCheckState) int32 {
	return ptr.Deref(st.RetryCount, 0) + 1
}

// Decide says what to do for one check of one workload.
func Decide(in Input) Decision {
	wl := in.Workload
	i := slices.IndexFunc(wl.Status.AdmissionChecks, func(s kueue.AdmissionCheckState) bool { return s.Name == in.Check })
	if i < 0 {
		return Decision{}
	}
	old := &wl.Status.AdmissionChecks[i]
	d := Decision{Attempt: Attempt(old)}
	if !holdsQuota(wl) {
		d.Delete = requestsExcept(in.Requests, 0)
		return d
	}
	d.Delete = requestsExcept(in.Requests, d.Attempt)
	cur := in.Requests[d.Attempt]
	next := old.DeepCopy()
	switch old.State {
	case kueue.CheckStateReady:
		if cur == nil {
			break
		}
		if c := trueCondition(cur, CapacityRevoked); c != nil {
			reject(next, d.Attempt, cur.Name, "its capacity was revoked", c)
		} else if c := trueCondition(cur, BookingExpired); c != nil && !admitted(wl) && in.Config != nil {
			failed(next, in.Config, cur.Name, "its booking expired", c)
		}
	case kueue.CheckStatePending:
		if in.Config == nil {
			break
		}
		if len(Needed(wl, in.Config)) == 0 {
			next.State, next.Message = kueue.CheckStateReady, MsgNotNeeded
			break
		}
		if cur == nil {
			d.Create = true
			next.Message = fmt.Sprintf("Waiting for ProvisioningRequest %s", RequestName(wl.Name, string(in.Check), d.Attempt))
			break
		}
		pending(next, wl, in.Config, cur)
	}
	d.State = changed(old, next, in.Now)
	return d
}

// pending maps the conditions of the current request onto a pending
// check.
func pending(next *kueue.AdmissionCheckState, wl *kueue.Workload, cfg *kueue.ProvisioningRequestConfigSpec, cur *Request) {
	revoked, failure, expired, provisioned :=
		trueCondition(cur, CapacityRevoked), trueCondition(cur, Failed), trueCondition(cur, BookingExpired), trueCondition(cur, Provisioned)
	switch {
	case revoked != nil:
		reject(next, Attempt(next), cur.Name, "its capacity was revoked", revoked)
	case failure != nil:
		failed(next, cfg, cur.Name, "it failed", failure)
	case expired != nil:
		failed(next, cfg, cur.Name, "its booking expired", expired)
	case provisioned != nil:
		next.State = kueue.CheckStateReady
		next.Message = withMessage(fmt.Sprintf("ProvisioningRequest %s provisioned the capacity", cur.Name), provisioned)
		next.PodSetUpdates = podSetUpdates(wl, cfg, cur)
	default:
		next.Message = withMessage(fmt.Sprintf("Waiting for ProvisioningRequest %s", cur.Name), meta.FindStatusCondition(cur.Conditions, Accepted))
	}
}

// withMessage appends the condition's message, when there is one.
func withMessage(s string, c *metav1.Condition) string {
	if c == nil || c.Message == "" {
		return s
	}
	return s + ": " + c.Message
}

// failed turns the check to Retry with the config's backoff, or to
// Rejected once the retries are used up.
func failed(next *kueue.AdmissionCheckState, cfg *kueue.ProvisioningRequestConfigSpec, name, what string, c *metav1.Condition) {
	retry := RetryOf(cfg)
	retries := ptr.Deref(next.RetryCount, 0)
	if retries >= retry.Limit {
		reject(next, retries+1, name, what, c)
		return
	}
	next.State = kueue.CheckStateRetry
	next.RequeueAfterSeconds = ptr.To(int32(retry.Delay(retries + 1).Seconds()))
	next.Message = fmt.Sprintf("ProvisioningRequest %s: %s (retry %d of %d)", name, describe(what, c), retries+1, retry.Limit)
}

func reject(next *kueue.AdmissionCheckState, attempt int32, name, what string, c *metav1.Condition) {
	next.State = kueue.CheckStateRejected
	next.RequeueAfterSeconds = nil
	next.Message = fmt.Sprintf("ProvisioningRequest %s (attempt %d): %s", name, attempt, describe(what, c))
}

func describe(what string, c *metav1.Condition) string {
	if c.Message != "" {
		return what + ": " + c.Message
	}
	if c.Reason != "" {
		return what + ": " + c.Reason
	}
	return what
}

// podSetUpdates makes the pods of the requested PodSets consume the
// provisioned capacity, with the config's node selectors valued from the
// request's provisioningClassDetails.
func podSetUpdates(wl *kueue.Workload, cfg *kueue.ProvisioningRequestConfigSpec, cur *Request) []kueue.PodSetUpdate {
	var out []kueue.PodSetUpdate
	for _, ps := range Needed(wl, cfg) {
		u := kueue.PodSetUpdate{Name: ps.Name, Annotations: map[string]string{
			ConsumeAnnotation: cur.Name,
			ClassAnnotation:   cfg.ProvisioningClassName,
		}}
		if pu := cfg.PodSetUpdates; pu != nil {
			for _, ns := range pu.NodeSelector {
				v, ok := cur.Details[ns.ValueFromProvisioningClassDetail]
				if !ok {
					continue
				}
				if u.NodeSelector == nil {
					u.NodeSelector = map[string]string{}
				}
				u.NodeSelector[ns.Key] = v
			}
		}
		out = append(out, u)
	}
	return out
}

// changed returns next with a fresh lastTransitionTime when its state
// moved, or nil when nothing a user sees changed.
func changed(old, next *kueue.AdmissionCheckState, now time.Time) *kueue.AdmissionCheckState {
	if old.State == next.State && old.Message == next.Message &&
		equality.Semantic.DeepEqual(old.RequeueAfterSeconds, next.RequeueAfterSeconds) &&
		equality.Semantic.DeepEqual(old.PodSetUpdates, next.PodSetUpdates) {
		return nil
	}
	if old.State != next.State {
		next.LastTransitionTime = metav1.NewTime(now)
	}
	return next
}

func trueCondition(pr *Request, typ string) *metav1.Condition {
	c := meta.FindStatusCondition(pr.Conditions, typ)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return c
}

// holdsQuota reports whether the workload holds a quota reservation it is
// not giving back: the only time its requests are wanted.
func holdsQuota(wl *kueue.Workload) bool {
	conds := wl.Status.Conditions
	return meta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved) &&
		!meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished) &&
		!meta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted) &&
		wl.Status.Admission != nil
}

func admitted(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
}

// requestsExcept lists the requests of every attempt but keep (0: all), in
// attempt order.
func requestsExcept(reqs map[int32]*Request, keep int32) []*Request {
	var out []*Request
	for _, a := range slices.Sorted(maps.Keys(reqs)) {
		if a != keep && reqs[a] != nil {
			out = append(out, reqs[a])
		}
	}
	return out
}
