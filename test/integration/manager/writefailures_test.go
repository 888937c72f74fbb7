package manager

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/apply"
)

// A panic while writing a workload's admission undoes the reservation the
// scheduler assumed: the workload is back in its queue, its quota free for
// others, and it is admitted on a later try.
func TestPanicWhileWritingAnAdmissionRequeues(t *testing.T) {
	ns, cq, _ := singleQueue(t, "1")
	hook := &panickingWrites{namespace: ns, name: "poison"}
	hook.on.Store(true)
	m := startPrepared(t, func(m *app.Manager) {
		m.Scheduler.Writer = &apply.Writer{Client: hookedClient{Client: m.Scheduler.Writer.Client, hook: hook}}
	})
	create(t, newWorkload(ns, "poison", "lq", 1, "1", 0))
	key := objectKey(ns, "poison")
	eventually(t, 30*time.Second, "the admission write of poison panicked", func() error {
		if hook.panics.Load() == 0 {
			return fmt.Errorf("no admission write of poison yet")
		}
		return nil
	})
	eventually(t, 30*time.Second, "poison back in its queue, holding no quota", func() error {
		if _, ok := m.Cache.Pending(key); !ok {
			return fmt.Errorf("not in its queue")
		}
		if _, ok := m.Cache.Admitted(key); ok {
			return fmt.Errorf("still holds quota")
		}
		return nil
	})
	// The ClusterQueue has room for one: poison's quota is free.
	create(t, newWorkload(ns, "other", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "other", cq)
	hook.on.Store(false)
	finish(t, ns, "other")
	waitAdmitted(t, ns, "poison", cq)
}

// panickingWrites makes the admission writes of one workload panic while
// on is set.
type panickingWrites struct {
	namespace, name string
	on              atomic.Bool
	panics          atomic.Int32
}

// hookedClient is a client whose status patches go through a hook.
type hookedClient struct {
	client.Client
	hook *panickingWrites
}

func (c hookedClient) Status() client.SubResourceWriter {
	return hookedStatus{SubResourceWriter: c.Client.Status(), hook: c.hook}
}

type hookedStatus struct {
	client.SubResourceWriter
	hook *panickingWrites
}

func (s hookedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	h := s.hook
	if h.on.Load() && obj.GetNamespace() == h.namespace && obj.GetName() == h.name {
		if body, err := patch.Data(obj); err == nil && bytes.Contains(body, []byte(`"admission":`)) {
			h.panics.Add(1)
			panic("test hook: writing the admission of " + h.name)
		}
	}
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// Status writes of one workload that fail at the API server in ways that
// may pass (a request that hangs until the client gives up, a 500 as from
// a failing webhook, a 429) are retried after a growing backoff, not at
// once: the manager keeps admitting the others, the failing workload's
// attempts in a window are a handful, the waits between them grow, and
// once the API server answers again the workload is admitted.
func TestFailingStatusWritesBackOff(t *testing.T) {
	ns, cq, _ := singleQueue(t, "10")
	proxy := newFaultyProxy(t, ns, "flaky")
	startBehind(t, proxy.config(), func(m *app.Manager) { m.Scheduler.WriteTimeout = time.Second })
	create(t, newWorkload(ns, "flaky", "lq", 1, "1", 0))
	proxy.waitAttempts(t, 1, 30*time.Second)
	first := proxy.attempts()[0].start
	// The first attempt hangs meanwhile: the others are admitted.
	for i := range 3 {
		name := fmt.Sprintf("fine%d", i)
		create(t, newWorkload(ns, name, "lq", 1, "1", 0))
		waitAdmitted(t, ns, name, cq)
	}
	const window = 12 * time.Second
	time.Sleep(time.Until(first.Add(window)))
	seen := proxy.attempts()
	n := 0
	for _, a := range seen {
		if a.start.Before(first.Add(window)) {
			n++
		}
	}
	// Waits of 0.25 s, 0.5 s, 1 s, 2 s, 4 s (less a jitter), two of the
	// attempts hanging 1 s: about 6 in 12 s, not thousands.
	if n < 4 || n > 9 {
		t.Fatalf("%d status writes of the failing workload in %s, want a few (4..9): %v", n, window, gaps(seen))
	}
	t.Logf("%d failed writes in %s, waits between them %v", n, window, gaps(seen))
	for i := 2; i < n; i++ {
		before, wait := seen[i-1].start.Sub(seen[i-2].end), seen[i].start.Sub(seen[i-1].end)
		if wait < before*6/5 {
			t.Errorf("the waits between attempts do not grow: %v", gaps(seen))
			break
		}
	}
	if last := seen[n-1].start.Sub(seen[n-2].end); last < 2*time.Second {
		t.Errorf("the last wait in %s is %s, want 2 s or more: %v", window, last, gaps(seen))
	}
	proxy.heal()
	waitAdmitted(t, ns, "flaky", cq)
}

// startBehind runs a manager for the test that reaches the API server
// through cfg, prepared by prepare, and stops it at cleanup.
func startBehind(t *testing.T, cfg *rest.Config, prepare func(*app.Manager)) *testManager {
	t.Helper()
	return startWith(t, func(o *app.Options) { o.RestConfig = cfg }, prepare)
}

// faultyProxy forwards requests to the test API server, except the status
// writes of one Workload until healed: it fails those in turn by hanging
// until the client gives up, answering 500, and answering 429.
type faultyProxy struct {
	server *httptest.Server
	status string // the URL path of the Workload's status
	healed atomic.Bool
	closed chan struct{}
	mu     sync.Mutex
	seen   []attempt
}

// attempt is one failed write: when it came and when it was answered.
type attempt struct{ start, end time.Time }

func newFaultyProxy(t *testing.T, ns, name string) *faultyProxy {
	t.Helper()
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultyProxy{status: fmt.Sprintf("/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status", ns, name),
		closed: make(chan struct{})}
	forward := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	p.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.healed.Load() || r.URL.Path != p.status || (r.Method != http.MethodPatch && r.Method != http.MethodPut) {
			forward.ServeHTTP(w, r)
			return
		}
		p.fail(w, r)
	}))
	t.Cleanup(func() {
		close(p.closed)
		p.server.CloseClientConnections()
		p.server.Close()
	})
	return p
}

// fail fails one write: the n-th hangs, answers 500 or 429 as n mod 3.
func (p *faultyProxy) fail(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	n := len(p.seen)
	p.seen = append(p.seen, attempt{start: time.Now()})
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.seen[n].end = time.Now()
		p.mu.Unlock()
	}()
	// Read to the end: only then does the server see the client go away.
	_, _ = io.Copy(io.Discard, r.Body)
	switch n % 3 {
	case 0:
		select {
		case <-r.Context().Done():
		case <-p.closed:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	case 1:
		writeStatus(w, http.StatusInternalServerError, "InternalError",
			`Internal error occurred: failed calling webhook "vworkload.kb.io": test proxy`)
	default:
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "the server has received too many requests (test proxy)")
	}
}

// writeStatus answers with a metav1.Status, as the API server does.
func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`,
		message, reason, code)
}

// config is a client configuration that reaches the API server through
// the proxy.
func (p *faultyProxy) config() *rest.Config {
	return &rest.Config{Host: p.server.URL, QPS: env.Config.QPS, Burst: env.Config.Burst}
}

func (p *faultyProxy) heal() { p.healed.Store(true) }

// attempts returns the failed writes so far.
func (p *faultyProxy) attempts() []attempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]attempt(nil), p.seen...)
}

func (p *faultyProxy) waitAttempts(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%d failed writes", n), func() error {
		if got := len(p.attempts()); got < n {
			return fmt.Errorf("%d so far", got)
		}
		return nil
	})
}

// gaps lists the waits between the end of each attempt and the next.
func gaps(seen []attempt) []string {
	var out []string
	for i := 1; i < len(seen); i++ {
		out = append(out, seen[i].start.Sub(seen[i-1].end).Round(10*time.Millisecond).String())
	}
	return out
}
