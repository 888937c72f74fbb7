package app

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"

	"github.com/kuota-dev/kuota/internal/metrics"
)

// eventCacheSize is how many recent events the manager's event
// correlator remembers in each of its three caches (the aggregator, the
// spam filter and the count of repeats), where client-go's default is
// 4,096. The manager records a few events per Workload, rarely the same
// one twice, so the caches hold mostly events that will never repeat:
// at client-go's size they were about 5 MB of a 62 MB live heap on the
// baseline scenario (bench/). A repeat of an event the smaller cache has
// forgotten is written as a new Event rather than as a higher count on
// the old one.
const eventCacheSize = 1024

// An event rate (kuota-manager --event-rate) and eventBurst bound the
// Normal events the manager records: on average that many a second, in
// bursts of up to eventBurst; Warning events always pass. Each event is a
// write to the API server, two per admission (QuotaReserved and
// Admitted), and under load client-go's broadcaster sends them one at a
// time (about 28 a second on the bench's baseline) and drops what does
// not fit its queue of 1,000, after holding the rest for half a minute or
// more. A limit drops them when recorded instead, keeping that capacity
// for admissions; the Workload's conditions hold the same facts.
// DefaultEventRate is 0, no limit, as in Kueue: whoever waits for one
// workload's event must see it whatever else happens in the cluster.
const (
	DefaultEventRate = 0.0
	eventBurst       = 100
)

// newEventBroadcaster returns the broadcaster the manager's event
// recorders use; rate is the event rate (0: no limit). The
// manager does not own it (controller-runtime stops only a broadcaster
// it made itself), so eventsRunnable shuts it down when the manager
// stops.
func newEventBroadcaster(rate float64) record.EventBroadcaster {
	var b record.EventBroadcaster = pacedBroadcaster{record.NewBroadcasterWithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: eventCacheSize})}
	if rate > 0 {
		b = &limitedBroadcaster{EventBroadcaster: b, limit: flowcontrol.NewTokenBucketRateLimiter(float32(rate), eventBurst)}
	}
	return &closingBroadcaster{EventBroadcaster: b}
}

// closingBroadcaster starts nothing once shut down. controller-runtime
// starts the broadcaster at the first event or when leader election
// begins; a manager that recorded none before it stopped (one without
// leader election) had it started during its own shutdown, after
// eventsRunnable shut it down, and logged two errors on every stop. Those
// are the two calls controller-runtime makes; the rest is passed through.
type closingBroadcaster struct {
	record.EventBroadcaster
	closed atomic.Bool
}

func (b *closingBroadcaster) Shutdown() {
	b.closed.Store(true)
	b.EventBroadcaster.Shutdown()
}

func (b *closingBroadcaster) StartRecordingToSink(sink record.EventSink) watch.Interface {
	if b.closed.Load() {
		return watch.NewEmptyWatch()
	}
	return b.EventBroadcaster.StartRecordingToSink(sink)
}

func (b *closingBroadcaster) StartEventWatcher(handler func(*corev1.Event)) watch.Interface {
	if b.closed.Load() {
		return watch.NewEmptyWatch()
	}
	return b.EventBroadcaster.StartEventWatcher(handler)
}

// Events yield to admissions when the API server is slow: after each event
// write the sink pauses as long as the write took, so that events take at
// most half of the one connection client-go writes them on. An idle API
// server answers in a few milliseconds and events still flow at hundreds a
// second; a loaded one (the bench's baseline: 20 to 30 ms a write while the
// workloads are created) gets half as many event writes as before, and
// the capacity goes to admissions and to the jobs' own writes. What client-go's queue of
// 1,000 cannot hold meanwhile it drops, as it always has under load.
type pacedBroadcaster struct{ record.EventBroadcaster }

func (b pacedBroadcaster) StartRecordingToSink(sink record.EventSink) watch.Interface {
	return b.EventBroadcaster.StartRecordingToSink(&pacedSink{EventSink: sink, now: time.Now, sleep: time.Sleep})
}

// pacedSink pauses after each write for as long as the write took.
type pacedSink struct {
	record.EventSink
	now   func() time.Time
	sleep func(time.Duration)
}

func (s *pacedSink) paced(write func() (*corev1.Event, error)) (*corev1.Event, error) {
	start := s.now()
	e, err := write()
	s.sleep(s.now().Sub(start))
	return e, err
}

func (s *pacedSink) Create(e *corev1.Event) (*corev1.Event, error) {
	return s.paced(func() (*corev1.Event, error) { return s.EventSink.Create(e) })
}

func (s *pacedSink) Update(e *corev1.Event) (*corev1.Event, error) {
	return s.paced(func() (*corev1.Event, error) { return s.EventSink.Update(e) })
}

func (s *pacedSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	return s.paced(func() (*corev1.Event, error) { return s.EventSink.Patch(old, data) })
}

// limitedBroadcaster hands out recorders that share one rate limit.
type limitedBroadcaster struct {
	record.EventBroadcaster
	limit flowcontrol.RateLimiter
}

func (b *limitedBroadcaster) NewRecorder(scheme *runtime.Scheme, source corev1.EventSource) record.EventRecorderLogger {
	return &limitedRecorder{EventRecorderLogger: b.EventBroadcaster.NewRecorder(scheme, source), limit: b.limit}
}

// limitedRecorder drops a Normal event when the shared limit has no room.
type limitedRecorder struct {
	record.EventRecorderLogger
	limit flowcontrol.RateLimiter
}

func (r *limitedRecorder) allow(eventType string) bool {
	if eventType != corev1.EventTypeNormal || r.limit.TryAccept() {
		return true
	}
	metrics.EventDropped()
	return false
}

func (r *limitedRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	if r.allow(eventType) {
		r.EventRecorderLogger.Event(obj, eventType, reason, message)
	}
}

func (r *limitedRecorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	if r.allow(eventType) {
		r.EventRecorderLogger.Eventf(obj, eventType, reason, format, args...)
	}
}

func (r *limitedRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventType, reason, format string, args ...any) {
	if r.allow(eventType) {
		r.EventRecorderLogger.AnnotatedEventf(obj, annotations, eventType, reason, format, args...)
	}
}

func (r *limitedRecorder) WithLogger(logger klog.Logger) record.EventRecorderLogger {
	return &limitedRecorder{EventRecorderLogger: r.EventRecorderLogger.WithLogger(logger), limit: r.limit}
}

// eventsRunnable shuts the broadcaster down when the manager stops; events
// recorded after that are dropped.
type eventsRunnable struct{ b record.EventBroadcaster }

func (r eventsRunnable) Start(ctx context.Context) error {
	<-ctx.Done()
	r.b.Shutdown()
	return nil
}

// NeedLeaderElection: the broadcaster serves followers too.
func (eventsRunnable) NeedLeaderElection() bool { return false }
