package demo

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestForwardSendsWorkloadVersions(t *testing.T) {
	w := watch.NewFake()
	out := make(chan *kueue.Workload, 10)
	done := make(chan struct{})
	go func() { forward(context.Background(), w, out); close(done) }()
	w.Add(&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	w.Modify(&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "b"}})
	w.Delete(&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "gone"}})
	w.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "not-a-workload"}})
	w.Stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("forward did not return when the watch ended")
	}
	close(out)
	var names []string
	for wl := range out {
		names = append(names, wl.Name)
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Errorf("forwarded %v, want [a b]", names)
	}
}
