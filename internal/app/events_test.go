package app

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// recorded counts what reaches the wrapped recorder.
type recorded struct {
	record.EventRecorderLogger
	normal, warning int
}

func (r *recorded) count(eventType string) {
	if eventType == corev1.EventTypeWarning {
		r.warning++
	} else {
		r.normal++
	}
}

func (r *recorded) Event(_ runtime.Object, eventType, _, _ string) { r.count(eventType) }
func (r *recorded) Eventf(_ runtime.Object, eventType, _, _ string, _ ...any) {
	r.count(eventType)
}

func TestEventRateDropsNormalEventsPastTheBurstOnly(t *testing.T) {
	inner := &recorded{}
	// A limiter that never refills: exactly the burst passes.
	rec := &limitedRecorder{EventRecorderLogger: inner, limit: flowcontrol.NewTokenBucketRateLimiter(0.0001, eventBurst)}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	for range 3 * eventBurst {
		rec.Eventf(wl, corev1.EventTypeNormal, "QuotaReserved", "Quota reserved in ClusterQueue %s", "cq")
		rec.Event(wl, corev1.EventTypeWarning, "Pending", "no quota")
	}
	if inner.normal != eventBurst {
		t.Errorf("normal events recorded = %d, want the burst, %d", inner.normal, eventBurst)
	}
	if inner.warning != 3*eventBurst {
		t.Errorf("warning events recorded = %d, want all %d", inner.warning, 3*eventBurst)
	}
}

func TestEventRateZeroRecordsEverything(t *testing.T) {
	b := newEventBroadcaster(0)
	defer b.Shutdown()
	if _, limited := b.NewRecorder(nil, corev1.EventSource{Component: "kueue-admission"}).(*limitedRecorder); limited {
		t.Fatal("--event-rate 0 should not limit events")
	}
	b = newEventBroadcaster(10)
	defer b.Shutdown()
	if _, limited := b.NewRecorder(nil, corev1.EventSource{Component: "kueue-admission"}).(*limitedRecorder); !limited {
		t.Fatal("recorders of a rate-limited broadcaster should be limited")
	}
}

// slowSink takes writeTime per write and notes when each write started.
type slowSink struct {
	writeTime time.Duration
	mu        sync.Mutex
	starts    []time.Time
}

func (s *slowSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.mu.Lock()
	s.starts = append(s.starts, time.Now())
	s.mu.Unlock()
	time.Sleep(s.writeTime)
	return e, nil
}

func (s *slowSink) Update(e *corev1.Event) (*corev1.Event, error) { return s.Create(e) }
func (s *slowSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return s.Create(e)
}

func (s *slowSink) started() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.starts)
}

func TestEventsPauseAsLongAsEachWriteTook(t *testing.T) {
	const write = 20 * time.Millisecond
	sink := &slowSink{writeTime: write}
	b := newEventBroadcaster(0)
	defer b.Shutdown()
	w := b.StartRecordingToSink(sink)
	defer w.Stop()
	rec := b.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: "kueue-admission"})
	const n = 5
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns", UID: types.UID(fmt.Sprint(i))}}
		rec.Event(pod, corev1.EventTypeNormal, "Admitted", "Admitted by ClusterQueue cq")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(sink.started()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	starts := sink.started()
	if len(starts) != n {
		t.Fatalf("%d of %d events written", len(starts), n)
	}
	for i := 1; i < n; i++ {
		// A write of 20 ms, then a pause of at least as long.
		if gap := starts[i].Sub(starts[i-1]); gap < 2*write {
			t.Errorf("write %d started %s after the previous one, want at least %s", i, gap, 2*write)
		}
	}
}

func TestPacedSinkPausesForTheWriteTimeOnEveryVerb(t *testing.T) {
	now := time.Unix(0, 0)
	var slept []time.Duration
	inner := &fakeClockSink{advance: func() { now = now.Add(30 * time.Millisecond) }}
	s := &pacedSink{EventSink: inner, now: func() time.Time { return now }, sleep: func(d time.Duration) { slept = append(slept, d) }}
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}
	for _, write := range []func() (*corev1.Event, error){
		func() (*corev1.Event, error) { return s.Create(e) },
		func() (*corev1.Event, error) { return s.Update(e) },
		func() (*corev1.Event, error) { return s.Patch(e, []byte("{}")) },
	} {
		if got, err := write(); err != nil || got != e {
			t.Fatalf("write returned %v, %v; want the event", got, err)
		}
	}
	if want := []time.Duration{30 * time.Millisecond, 30 * time.Millisecond, 30 * time.Millisecond}; !slices.Equal(slept, want) {
		t.Errorf("pauses = %v, want %v", slept, want)
	}
	if inner.calls != 3 {
		t.Errorf("inner sink got %d writes, want 3", inner.calls)
	}
}

// fakeClockSink moves a fake clock on each write.
type fakeClockSink struct {
	advance func()
	calls   int
}

func (s *fakeClockSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.calls++
	s.advance()
	return e, nil
}
func (s *fakeClockSink) Update(e *corev1.Event) (*corev1.Event, error) { return s.Create(e) }
func (s *fakeClockSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return s.Create(e)
}

// A broadcaster started after the manager shut it down (controller-runtime
// does so while stopping a manager that recorded no event) logs nothing.
func TestShutDownBroadcasterStartsQuietly(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	klog.SetLogger(funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{}))
	defer klog.ClearLogger()
	b := newEventBroadcaster(0)
	b.Shutdown()
	b.StartRecordingToSink(&slowSink{})
	b.StartEventWatcher(func(*corev1.Event) {})
	mu.Lock()
	defer mu.Unlock()
	if len(lines) > 0 {
		t.Fatalf("starting a shut-down broadcaster logged %q, want nothing", lines)
	}
}
