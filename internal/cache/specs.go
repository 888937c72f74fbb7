package cache

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

// The setters below are called by the informer handlers only when
// something the scheduler reads changed (internal/feed filters the rest).

// SetFlavor records a ResourceFlavor.
func (c *Cache) SetFlavor(f *state.Flavor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetFlavor(f)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteFlavor forgets a ResourceFlavor.
func (c *Cache) DeleteFlavor(name kueue.ResourceFlavorReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteFlavor(name)
	c.notify()
}

// SetClusterQueue records a ClusterQueue spec (a terminating one keeps its
// place in the cohort tree and admits nothing).
func (c *Cache) SetClusterQueue(cq *state.ClusterQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known := c.state.ClusterQueue(cq.Name)
	c.state.SetClusterQueue(cq)
	c.fair.next = 0 // admission fair sharing may apply to it now
	// Unparks everything parked: any change may let a workload in.
	c.queues.SetClusterQueue(cq.Name, cq.QueueingStrategy)
	if !known || policyOf(old.StopPolicy) != policyOf(cq.StopPolicy) || old.Terminating != cq.Terminating {
		c.clusterQueueMovedLocked(cq.Name)
	}
	c.notify()
}

// DeleteClusterQueue records that a ClusterQueue object is gone. While
// workloads still hold quota in it, it stays in the cohort tree,
// terminating, until the last one is released.
func (c *Cache) DeleteClusterQueue(name kueue.ClusterQueueReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.DeleteClusterQueue(name) {
		c.queues.DeleteClusterQueue(name)
		c.unparkTreeLocked(name)
	}
	c.clusterQueueMovedLocked(name)
	c.notify()
}

// clusterQueueMovedLocked places again the workloads waiting in the
// ClusterQueue's LocalQueues and revisits those holding quota in it: its
// stop policy, its existence or its termination decide what happens to
// them.
func (c *Cache) clusterQueueMovedLocked(name kueue.ClusterQueueReference) {
	for _, lq := range c.queues.LocalQueuesOf(name) {
		c.localQueueMovedLocked(lq)
	}
	for _, a := range c.state.AdmittedIn(name) {
		c.revisits.add(a.Key)
	}
}

// SetCohort records a Cohort spec.
func (c *Cache) SetCohort(co *state.Cohort) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetCohort(co)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteCohort forgets a Cohort object.
func (c *Cache) DeleteCohort(name kueue.CohortReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteCohort(name)
	c.queues.UnparkAll()
	c.notify()
}

// SetAdmissionCheck records whether an AdmissionCheck is active, and its
// controllerName.
func (c *Cache) SetAdmissionCheck(name kueue.AdmissionCheckReference, active bool, controller string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetAdmissionCheck(name, active, controller)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteAdmissionCheck forgets an AdmissionCheck.
func (c *Cache) DeleteAdmissionCheck(name kueue.AdmissionCheckReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteAdmissionCheck(name)
	c.notify()
}

// SetNamespace records a namespace's labels (for namespace selectors).
func (c *Cache) SetNamespace(name string, labels map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetNamespace(name, labels)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteNamespace forgets a namespace.
func (c *Cache) DeleteNamespace(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteNamespace(name)
}

// SetLocalQueue records which ClusterQueue a LocalQueue feeds and its stop
// policy; its workloads are placed again.
func (c *Cache) SetLocalQueue(key LocalQueueKey, cq kueue.ClusterQueueReference, stop kueue.StopPolicy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues.SetLocalQueue(key, cq)
	if stopped(stop) {
		c.lqStop[key] = policyOf(stop)
	} else {
		delete(c.lqStop, key)
	}
	c.localQueueMovedLocked(key)
	c.notify()
}

// DeleteLocalQueue forgets a LocalQueue.
func (c *Cache) DeleteLocalQueue(key LocalQueueKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues.DeleteLocalQueue(key)
	delete(c.lqStop, key)
	c.forgetLocalQueueFairSharingLocked(key)
	c.localQueueMovedLocked(key)
	c.notify()
}

// SetPriorityClass records a WorkloadPriorityClass value.
func (c *Cache) SetPriorityClass(name string, value int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.priorities[name] = value
}

// DeletePriorityClass forgets a WorkloadPriorityClass.
func (c *Cache) DeletePriorityClass(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.priorities, name)
}
