package app

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"

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
	if _, limited := b.(*limitedBroadcaster); limited {
		t.Fatal("--event-rate 0 should not limit events")
	}
	b = newEventBroadcaster(10)
	defer b.Shutdown()
	if _, limited := b.NewRecorder(nil, corev1.EventSource{Component: "kueue-admission"}).(*limitedRecorder); !limited {
		t.Fatal("recorders of a rate-limited broadcaster should be limited")
	}
}
