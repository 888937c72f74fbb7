package crash

import (
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/testutil"
)

// The replicas reach kube-apiserver through a TCP proxy (their kubeconfig
// names it), so that the test can drop their connections as a broken
// network or a load balancer failing over does: every watch ends at once
// and each replica must relist and watch again, with writes in flight
// failing halfway. The TLS session is the replicas' own with the API
// server: the proxy listens on 127.0.0.1, which envtest's serving
// certificate covers (it is issued for localhost and the address the
// API server listens on), so the replicas verify it as usual.

// refuseMin, refuseMax bound the spell of refused connections after half
// of the drops: long enough, at the top, for a leader to miss its renew
// deadline (1.5 s in managerConfig) and end itself.
const (
	refuseMin = 500 * time.Millisecond
	refuseMax = 2 * time.Second
)

// apiProxy starts the proxy to the test API server, closed at cleanup.
func apiProxy(t *testing.T) *testutil.TCPProxy {
	t.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testutil.NewTCPProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	// After the harness has stopped the replicas (deferred in the test).
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// drop cuts every connection of the replicas to the API server; half the
// time it then refuses new ones for refuseMin to refuseMax. Half of the
// drops wait for an admission to be seen first, so that they land in a
// burst of writes. Like a restart, it explains a replica ending itself
// (it could not renew its lease meanwhile), and the recovery after a kill
// soon after is measured apart.
func (h *harness) drop(rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		h.obs.waitFor(sigAdmission, 2*time.Second)
	}
	refuse := time.Duration(0)
	if rng.IntN(2) == 0 {
		refuse = refuseMin + time.Duration(rng.Int64N(int64(refuseMax-refuseMin)+1))
	}
	h.rec.reset()
	h.drops.begin()
	if refuse > 0 {
		// Refuse before cutting, so that no replica reconnects in between.
		h.proxy.Refuse(true)
	}
	h.fig.droppedConns += h.proxy.Cut()
	if refuse > 0 {
		time.Sleep(refuse)
		h.proxy.Refuse(false)
		h.fig.refusals++
		h.fig.maxRefusal = max(h.fig.maxRefusal, refuse)
	}
	h.drops.end()
	h.fig.drops++
}

// unreachable reports whether the API server was away from the replicas
// around a moment: restarting, or their connections dropped.
func (h *harness) unreachable(at time.Time) bool {
	return h.outages.around(at) || h.drops.around(at)
}
