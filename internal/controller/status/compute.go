package status

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/fairsharing"
	"github.com/kuota-dev/kuota/internal/state"
)

// Statuses is what the cache says about every queue and cohort, computed in
// one pass under the cache lock.
type Statuses struct {
	Queues  map[kueue.ClusterQueueReference]*QueueFigures
	Locals  map[queueing.LocalQueueKey]*LocalFigures
	Cohorts map[kueue.CohortReference]*CohortFigures
	Shares  fairsharing.Shares
	// Fair holds admission fair sharing's record of the LocalQueues it
	// applies to (nil when it is off).
	Fair    map[queueing.LocalQueueKey]cache.FairShare
	queuesK map[kueue.ClusterQueueReference]*state.ClusterQueue
	inact   map[kueue.ClusterQueueReference]state.Inactive
	fair    bool
	now     metav1.Time
}

// QueueFigures are the numbers of one ClusterQueue.
type QueueFigures struct {
	Pending, Reserving, Admitted int32
	Reserved, Used               resources.FlavorResourceQuantities
	Nominal                      map[resources.FlavorResource]resources.Amount
	// Waiting splits Pending into active and parked workloads.
	Waiting queueing.PendingCounts
	// Cohort and RootCohort place the queue in the cohort tree ("" alone).
	Cohort, RootCohort kueue.CohortReference
}

// CohortFigures place a Cohort in the tree and count what its subtree
// admitted.
type CohortFigures struct {
	Parent, Root kueue.CohortReference
	Admitted     int32
}

// LocalFigures are the numbers of one LocalQueue.
type LocalFigures struct {
	Pending, Reserving, Admitted int32
	Reserved, Used               resources.FlavorResourceQuantities
}

// Compute gathers the figures of every queue from the cache.
func Compute(c *cache.Cache, fair bool) *Statuses {
	st := &Statuses{
		Queues: map[kueue.ClusterQueueReference]*QueueFigures{}, Locals: map[queueing.LocalQueueKey]*LocalFigures{},
		Cohorts: map[kueue.CohortReference]*CohortFigures{},
		queuesK: map[kueue.ClusterQueueReference]*state.ClusterQueue{}, inact: map[kueue.ClusterQueueReference]state.Inactive{},
		fair: fair, now: metav1.Now(),
	}
	c.Read(func(s *state.State, q *queueing.Manager) {
		if fair {
			st.Shares = fairsharing.WeightedShares(s.Tree(), fairsharing.StateWeights(s))
		}
		waiting := q.PendingSummary()
		tree := s.Tree()
		for _, name := range tree.CohortNames() {
			n := tree.Cohort(name)
			cf := &CohortFigures{Root: kueue.CohortReference(n.Root().Name())}
			if p := n.Parent(); p != nil {
				cf.Parent = kueue.CohortReference(p.Name())
			}
			st.Cohorts[name] = cf
		}
		for _, name := range s.ClusterQueueNames() {
			cq, _ := s.ClusterQueue(name)
			st.queuesK[name] = cq
			if in, ok := s.ClusterQueueInactive(name); ok {
				st.inact[name] = in
			}
			f := &QueueFigures{Pending: int32(q.Pending(name)), Reserved: resources.FlavorResourceQuantities{},
				Used: resources.FlavorResourceQuantities{}, Nominal: map[resources.FlavorResource]resources.Amount{}}
			for fr, quota := range cq.Quotas {
				f.Nominal[fr] = quota.Nominal
			}
			f.Waiting = waiting[name]
			if n := tree.ClusterQueue(name); n != nil && n.Parent() != nil {
				f.Cohort, f.RootCohort = kueue.CohortReference(n.Parent().Name()), kueue.CohortReference(n.Root().Name())
			}
			for _, a := range s.AdmittedIn(name) {
				f.Reserving++
				f.Reserved.Add(a.Usage)
				lf := st.local(queueing.LocalQueueKey{Namespace: a.Key.Namespace, Name: a.LocalQueue})
				lf.Reserving++
				lf.Reserved.Add(a.Usage)
				if a.Admitted {
					f.Admitted++
					f.Used.Add(a.Usage)
					lf.Admitted++
					lf.Used.Add(a.Usage)
				}
			}
			st.Queues[name] = f
			// Bounded walk: a cycle of Cohort parents must not loop.
			for c, steps := f.Cohort, 0; c != "" && steps < len(st.Cohorts); steps++ {
				cf := st.Cohorts[c]
				if cf == nil {
					break
				}
				cf.Admitted += f.Admitted
				c = cf.Parent
			}
		}
		for key, n := range q.PendingByLocalQueue() {
			st.local(key).Pending = int32(n)
		}
	})
	st.Fair = c.FairShares(st.now.UnixNano())
	return st
}

func (st *Statuses) local(key queueing.LocalQueueKey) *LocalFigures {
	f := st.Locals[key]
	if f == nil {
		f = &LocalFigures{Reserved: resources.FlavorResourceQuantities{}, Used: resources.FlavorResourceQuantities{}}
		st.Locals[key] = f
	}
	return f
}

// ClusterQueue returns the status the ClusterQueue should have.
func (st *Statuses) ClusterQueue(obj *kueue.ClusterQueue) *kueue.ClusterQueueStatus {
	name := kueue.ClusterQueueReference(obj.Name)
	out := obj.Status.DeepCopy()
	f := st.Queues[name]
	if f == nil {
		f = &QueueFigures{}
	}
	out.PendingWorkloads, out.ReservingWorkloads, out.AdmittedWorkloads = f.Pending, f.Reserving, f.Admitted
	out.FlavorsReservation = flavorUsage(obj, f.Reserved, f.Nominal)
	out.FlavorsUsage = flavorUsage(obj, f.Used, f.Nominal)
	if st.fair {
		out.FairSharing = &kueue.FairSharingStatus{WeightedShare: st.Shares.ClusterQueues[name]}
	}
	status, reason, msg := metav1.ConditionTrue, "Ready", "Can admit new workloads"
	switch in, inactive := st.inact[name]; {
	case !obj.DeletionTimestamp.IsZero():
		status, reason, msg = metav1.ConditionFalse, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
	case st.queuesK[name] == nil:
		status, reason, msg = metav1.ConditionFalse, "Unknown", "The ClusterQueue is not known to the scheduler yet"
	case inactive:
		status, reason, msg = metav1.ConditionFalse, in.Reason, "Can't admit new workloads: "+in.Message
	}
	apply.SetCondition(&out.Conditions, kueue.ClusterQueueActive, status, reason, msg, obj.Generation, st.now)
	return out
}

// flavorUsage lists usage per flavor and resource in the order of the
// ClusterQueue's resource groups, with what is above nominal as borrowed.
func flavorUsage(obj *kueue.ClusterQueue, usage resources.FlavorResourceQuantities, nominal map[resources.FlavorResource]resources.Amount) []kueue.FlavorUsage {
	var out []kueue.FlavorUsage
	for _, g := range obj.Spec.ResourceGroups {
		for _, fq := range g.Flavors {
			fu := kueue.FlavorUsage{Name: fq.Name}
			for _, r := range g.CoveredResources {
				fr := resources.FlavorResource{Flavor: fq.Name, Resource: r}
				total := usage[fr]
				fu.Resources = append(fu.Resources, kueue.ResourceUsage{
					Name:     r,
					Total:    quantity(r, total),
					Borrowed: quantity(r, max(0, resources.Sub(total, nominal[fr]))),
				})
			}
			out = append(out, fu)
		}
	}
	return out
}

func quantity(r corev1.ResourceName, a resources.Amount) resource.Quantity {
	return resources.ToQuantity(r, a)
}

// LocalQueue returns the status the LocalQueue should have.
func (st *Statuses) LocalQueue(obj *kueue.LocalQueue) *kueue.LocalQueueStatus {
	out := obj.Status.DeepCopy()
	f := st.Locals[queueing.LocalQueueKey{Namespace: obj.Namespace, Name: kueue.LocalQueueName(obj.Name)}]
	if f == nil {
		f = &LocalFigures{}
	}
	out.PendingWorkloads, out.ReservingWorkloads, out.AdmittedWorkloads = f.Pending, f.Reserving, f.Admitted
	out.FlavorsReservation = localUsage(f.Reserved)
	out.FlavorsUsage = localUsage(f.Used)
	if fs, ok := st.Fair[queueing.LocalQueueKey{Namespace: obj.Namespace, Name: kueue.LocalQueueName(obj.Name)}]; ok {
		if out.FairSharing == nil {
			out.FairSharing = &kueue.LocalQueueFairSharingStatus{}
		}
		out.FairSharing.AdmissionFairSharingStatus = &kueue.AdmissionFairSharingStatus{ConsumedResources: fs.Consumed, LastUpdate: fs.LastUpdate}
	}
	cqName := obj.Spec.ClusterQueue
	status, reason, msg := metav1.ConditionTrue, "Ready", "Can submit new workloads to localQueue"
	_, inactive := st.inact[cqName]
	switch {
	case obj.Spec.StopPolicy != nil && *obj.Spec.StopPolicy != kueue.None:
		status, reason, msg = metav1.ConditionFalse, "Stopped", "LocalQueue is stopped"
	case st.queuesK[cqName] == nil:
		status, reason, msg = metav1.ConditionFalse, "ClusterQueueDoesNotExist", "Can't submit new workloads to clusterQueue"
	case inactive:
		status, reason, msg = metav1.ConditionFalse, "ClusterQueueIsInactive", fmt.Sprintf("Can't submit new workloads to clusterQueue %s", cqName)
	}
	apply.SetCondition(&out.Conditions, kueue.LocalQueueActive, status, reason, msg, obj.Generation, st.now)
	return out
}

func localUsage(usage resources.FlavorResourceQuantities) []kueue.LocalQueueFlavorUsage {
	var out []kueue.LocalQueueFlavorUsage
	byFlavor := map[kueue.ResourceFlavorReference]int{}
	for _, fr := range usage.Keys() {
		i, ok := byFlavor[fr.Flavor]
		if !ok {
			i = len(out)
			byFlavor[fr.Flavor] = i
			out = append(out, kueue.LocalQueueFlavorUsage{Name: fr.Flavor})
		}
		out[i].Resources = append(out[i].Resources, kueue.LocalQueueResourceUsage{Name: fr.Resource, Total: quantity(fr.Resource, usage[fr])})
	}
	return out
}

// Cohort returns the status the Cohort should have.
func (st *Statuses) Cohort(obj *kueue.Cohort) *kueue.CohortStatus {
	out := obj.Status.DeepCopy()
	out.FairSharing = &kueue.FairSharingStatus{WeightedShare: st.Shares.Cohorts[kueue.CohortReference(obj.Name)]}
	return out
}
