package manager

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
)

// A manager whose namespace does not exist (a bare API server: Kueue's
// scalability runner with --minimalKueue) runs standalone and admits, with
// the installed defaults of leader election and webhooks; as installed, it
// would retry creating its Lease in the missing namespace and never admit.
func TestManagerWithoutItsNamespaceRunsStandalone(t *testing.T) {
	const ns = "kuota-no-such-namespace"
	missing, err := app.NamespaceMissing(context.Background(), env.Client, ns)
	if err != nil || !missing {
		t.Fatalf("NamespaceMissing(%s) = %v, %v; want true, nil", ns, missing, err)
	}
	cfg, err := configapi.Decode([]byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nnamespace: " + ns + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(cfg.LeaderElection.LeaderElect, false) {
		t.Fatal("the default Configuration should elect a leader")
	}
	fm, err := env.StartManagerWith(cfg, func(o *app.Options) {
		o.Standalone = missing
		o.Webhooks = []func(ctrl.Manager) error{func(ctrl.Manager) error { return nil }}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fm.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	wns := namespace(t)
	create(t, flavor("f-alone", nil), clusterQueue("cq-alone", "", "f-alone", "2"), localQueue(wns, "lq", "cq-alone"))
	create(t, newWorkload(wns, "w1", "lq", 1, "1", 0))
	waitAdmitted(t, wns, "w1", "cq-alone")
}
