// Package lifecycle decides, as pure functions of a Workload and a view of
// the cache, where a workload belongs in the manager's live picture
// (Place: holding quota, in its queue, or set aside) and what the next
// step of its lifecycle is (Next: deactivate, evict on a timeout or a
// check, clear a reservation, requeue after a backoff or a restarted
// queue, say why it cannot queue). The manager's informer handlers act on
// Place; the workload controller performs the steps Next returns and
// nothing else. Both are table-tested here, with no API server.
//
// It also converts Workloads into the scheduler's records (Info and
// Admitted) and holds the rules those share: queue-order time, effective
// priority, applicable admission checks, the waitForPodsReady backoff.
//
// The package is pure: no I/O, no clients, no globals.
package lifecycle
