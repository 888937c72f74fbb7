// Package sim runs Kuota's scheduling core over a workload trace in virtual
// time, with no API server: the same cache (placement, queues, parking),
// the same scheduling.Decide (flavors, preemption, fair sharing) and the
// same handling of decisions as the manager, and a model of what the API
// server and the jobs add: how long an admission, an eviction and a finish
// take to land, how long a job takes to notice its admission, and how long
// a scheduling cycle takes. It answers "what would this queue setup, or
// this policy, have done to this load?" in seconds, deterministically for
// a seed, and prints the figures the live benchmark (bench/) prints.
//
// Workloads in a simulation have no job: a preempted workload gives its
// quota back in the write that evicts it, as Kuota does for Workloads
// without an owner, and goes back to its queue; admitted again, it runs its
// whole runtime again.
//
// Topology-aware flavors place their PodSets on the setup's nodes (a
// topology scenario's, or the Nodes of a setup file), fed to the cache as
// the manager's feed does; no pod but the admitted workloads' takes their
// capacity.
package sim
