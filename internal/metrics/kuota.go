package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Kuota's own metrics, beside Kueue's, under the kuota_ prefix. They show
// what the manager spends its time on: how many scheduling cycles ran and
// how often parked workloads were released to be tried again. A status
// write (Kuota's own or anyone's) must move neither.
var (
	cycles = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kuota_scheduling_cycles_total",
		Help: "Scheduling cycles run: each wake-up of the scheduler, whether or not some workload was a candidate.",
	})
	eventsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kuota_events_dropped_total",
		Help: "Normal events not recorded because the manager's event rate (kuota-manager --event-rate) was spent.",
	})
	unparksSource atomic.Pointer[func() uint64]
	unparks       = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "kuota_queue_unparks_total",
		Help: "Times parked workloads were released to be tried again (capacity grew, or a queue, cohort, flavor or namespace changed).",
	}, func() float64 {
		if f := unparksSource.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
)

// RegisterKuota registers Kuota's own metrics with reg.
func RegisterKuota(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{cycles, eventsDropped, unparks} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// SchedulingCycle counts one scheduling cycle.
func SchedulingCycle() { cycles.Inc() }

// EventDropped counts one Normal event dropped past the event rate.
func EventDropped() { eventsDropped.Inc() }

// SetUnparksSource sets where kuota_queue_unparks_total is read from (the
// cache's count).
func SetUnparksSource(f func() uint64) { unparksSource.Store(&f) }
