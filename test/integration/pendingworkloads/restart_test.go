package pendingworkloads

import (
	"testing"

	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// A new manager (a restart, or a failover) serves the same answers, built
// from the informers, on a new port with a new certificate: the
// registration follows it.
func TestServesAfterManagerRestart(t *testing.T) {
	ensureFlavor(t)
	ns := namespace(t)
	create(t, clusterQueue("cq-restart", "0", kueue.StrictFIFO), localQueue(ns, "lq", "cq-restart"),
		workload(ns, "first", "lq", "1", 2), workload(ns, "second", "lq", "1", 1))
	want := []item{{"first", "lq", 2, 0, 0}, {"second", "lq", 1, 1, 1}}
	path := cqPath("v1beta2", "cq-restart", "")
	waitPending(t, path, want)
	oldPort := mgr.Visibility.Port()
	if err := mgr.Stop(); err != nil {
		t.Fatal(err)
	}
	cfg, err := framework.ManagerConfig()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err = env.StartManagerWith(cfg, func(o *app.Options) {
		o.Visibility, o.VisibilityPort, o.LocalVisibility = ptr.To(true), ptr.To(0), true
	})
	if err != nil {
		t.Fatal(err)
	}
	if mgr.Visibility.Port() == oldPort {
		t.Logf("the new manager got the same port %d", oldPort)
	}
	waitPending(t, path, want)
}
