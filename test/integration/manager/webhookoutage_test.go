package manager

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/localwebhook"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/internal/webhook"
)

// The Workload webhook is down while the manager writes a batch of
// admissions: the webhook (the manager's own, failurePolicy Fail, on
// workloads and workloads/status) is registered through a proxy that is
// switched to refuse connections after the first few admissions are
// written, so that the API server refuses every other Workload write with
// an internal error for 5 s. The manager must undo each reservation it
// could not write (once the webhook is back, everything that fits is
// admitted within 15 s and the ClusterQueue's status equals the sum over
// the admitted Workloads), retry with a backoff (a handful of refused
// calls per workload during the outage, not one per scheduling cycle),
// and admit nothing twice.
func TestWorkloadWebhookDownWhileAdmitting(t *testing.T) {
	const (
		fits, batch   = 20, 30 // one cpu each, a quota of fits cpus
		writtenBefore = 4      // admissions written before the outage
		outage        = 5 * time.Second
	)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, strconv.Itoa(fits), func(c *kueue.ClusterQueue) {
		c.Spec.StopPolicy = ptr.To(kueue.Hold) // the batch waits until the test lets it go
	}), localQueue(ns, "lq", cq))

	cfg := testConfigWithWebhookPort(t, func(*configapi.Configuration) {})
	proxy, err := testutil.NewTCPProxy(net.JoinHostPort(localwebhook.Host, strconv.Itoa(*cfg.Webhook.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	gate := &outageGate{after: writtenBefore, down: make(chan struct{})}
	gate.first.Add(writtenBefore)
	gate.takeDown = func() { proxy.Refuse(true); proxy.Cut(); close(gate.down) }
	m := startWith(t, func(o *app.Options) {
		o.LocalWebhooks = true
		o.WebhookManifests = workloadWebhookOnly(t, ns)
		o.Webhooks = []func(ctrl.Manager) error{webhook.Setup}
	}, func(m *app.Manager) {
		m.Scheduler.Writer = &apply.Writer{Client: gatedClient{Client: m.Scheduler.Writer.Client, gate: gate}}
	}, func(c *configapi.Configuration) { c.Webhook = cfg.Webhook })
	routeThrough(t, proxy, ns)

	seen := watchAdmissions(t, ns)
	for i := range batch {
		create(t, newWorkload(ns, fmt.Sprintf("w%02d", i), "lq", 1, "1", 0))
	}
	setClusterQueueStopPolicy(t, cq, kueue.None)
	select {
	case <-gate.down:
	case <-time.After(30 * time.Second):
		t.Fatalf("the manager wrote %d admissions in 30 s, want %d before the outage", gate.started.Load(), writtenBefore+1)
	}
	time.Sleep(outage)
	before := len(admittedIn(t, ns, cq))
	if before > writtenBefore {
		t.Fatalf("%d workloads admitted by the end of the outage, want at most the %d written before it", before, writtenBefore)
	}
	refused := proxy.Refused() // the proxy refused nothing before the outage
	proxy.Refuse(false)
	back := time.Now()
	t.Logf("%d workloads admitted before the outage; the API server's calls to the webhook refused during the %s outage: %d",
		before, outage, refused)
	if refused == 0 {
		t.Fatalf("no Workload write reached the webhook during the outage")
	}
	// An unbounded retry sends one write per workload and scheduling cycle.
	if refused >= 10*batch {
		t.Errorf("%d refused webhook calls in %s for %d workloads: the manager does not back off", refused, outage, batch)
	}

	eventually(t, 15*time.Second, fmt.Sprintf("%d workloads admitted after the webhook is back", fits), func() error {
		if got := len(admittedIn(t, ns, cq)); got != fits {
			return fmt.Errorf("%d admitted", got)
		}
		return nil
	})
	t.Logf("all that fits admitted %s after the webhook came back", time.Since(back).Round(100*time.Millisecond))
	n, cpu := checkNoHalfAdmission(t, m, ns)
	waitUsage(t, cq, fl, int32(n), cpu, "0")
	eventually(t, 5*time.Second, "each workload admitted once", func() error { return seen.check(fits) })
	// And it stays so.
	afterCycles(t, 3, func() error { return seen.check(fits) })
}

// workloadWebhookOnly is the generated Workload webhook alone, limited to
// the test's namespace so that the outage spares the other tests' writes.
func workloadWebhookOnly(t *testing.T, ns string) []byte {
	t.Helper()
	defs, err := localwebhook.Parse(localwebhook.Manifests())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range defs.Validating {
		for _, w := range c.Webhooks {
			if w.Name != "vworkload.kb.io" {
				continue
			}
			if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
				t.Fatalf("the Workload webhook's failurePolicy is %v, want Fail", w.FailurePolicy)
			}
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
			c.Webhooks = []admissionregistrationv1.ValidatingWebhook{w}
			c.TypeMeta = metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"}
			out, err := yaml.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Fatal("no vworkload.kb.io among the generated webhooks")
	return nil
}

// routeThrough points the registered Workload webhook at the proxy once
// local mode has registered it (with the manager's own port), and waits
// until the API server calls it there: a dry-run creation runs the
// validating webhooks without storing anything.
func routeThrough(t *testing.T, proxy *testutil.TCPProxy, ns string) {
	t.Helper()
	ctx := context.Background()
	name := localwebhook.NamePrefix + localwebhook.ValidatingName
	if name != certs.ValidatingWebhookConfigurationName {
		t.Fatalf("local mode registers %s, the bundle names it %s", name, certs.ValidatingWebhookConfigurationName)
	}
	eventually(t, 30*time.Second, "the Workload webhook routed through the proxy", func() error {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &vwc); err != nil {
			return err
		}
		if len(vwc.Webhooks) != 1 || vwc.Webhooks[0].ClientConfig.URL == nil {
			return fmt.Errorf("registered webhooks %+v", vwc.Webhooks)
		}
		u, err := url.Parse(*vwc.Webhooks[0].ClientConfig.URL)
		if err != nil {
			return err
		}
		u.Host = proxy.Addr() // 127.0.0.1, which the loopback certificate covers
		vwc.Webhooks[0].ClientConfig.URL = ptr.To(u.String())
		return env.Client.Update(ctx, &vwc)
	})
	eventually(t, 30*time.Second, "the API server calls the Workload webhook through the proxy", func() error {
		before := proxy.Accepted()
		probe := newWorkload(ns, "probe", "lq", 1, "1", 0)
		if err := env.Client.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if proxy.Accepted() == before {
			return fmt.Errorf("the dry run did not go through the proxy")
		}
		return nil
	})
}

// outageGate lets the manager's first admission writes through and takes
// the webhook down before any later one goes out, once those are done:
// the outage starts in the middle of the batch, never before its first
// writes nor after its last.
type outageGate struct {
	after    int32
	started  atomic.Int32
	first    sync.WaitGroup // the first after writes, until they return
	once     sync.Once
	takeDown func()
	down     chan struct{}
}

// gatedClient is a client whose admission writes pass the gate.
type gatedClient struct {
	client.Client
	gate *outageGate
}

func (c gatedClient) Status() client.SubResourceWriter {
	return gatedStatus{SubResourceWriter: c.Client.Status(), gate: c.gate}
}

type gatedStatus struct {
	client.SubResourceWriter
	gate *outageGate
}

func (s gatedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	body, err := patch.Data(obj)
	if err != nil || !bytes.Contains(body, []byte(`"admission":`)) {
		return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	g := s.gate
	if n := g.started.Add(1); n <= g.after {
		defer g.first.Done()
		return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	g.first.Wait()
	g.once.Do(g.takeDown)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// admissionWatch counts, per Workload, the times it went from no
// admission to one, from a watch started before the Workloads exist.
type admissionWatch struct {
	mu         sync.Mutex
	admitted   map[string]bool
	admissions map[string]int
	evicted    map[string]bool
}

func watchAdmissions(t *testing.T, ns string) *admissionWatch {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := &admissionWatch{admitted: map[string]bool{}, admissions: map[string]int{}, evicted: map[string]bool{}}
	started := make(chan struct{})
	go func() {
		for ctx.Err() == nil {
			w.follow(ctx, wc, ns, started)
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("no watch of the Workloads within 30 s")
	}
	return w
}

// follow lists the Workloads, then watches them from there until the
// watch ends or fails (the Workload CRD's update by local mode can make
// the list's resourceVersion too old to watch from): the caller lists
// again. A relist may hide states in between, never add an admission.
func (w *admissionWatch) follow(ctx context.Context, wc client.WithWatch, ns string, started chan struct{}) {
	var list kueue.WorkloadList
	if err := wc.List(ctx, &list, client.InNamespace(ns)); err != nil {
		time.Sleep(100 * time.Millisecond)
		return
	}
	for i := range list.Items {
		w.record(&list.Items[i])
	}
	events, err := wc.Watch(ctx, &kueue.WorkloadList{}, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		return
	}
	defer events.Stop()
	select {
	case <-started:
	default:
		close(started)
	}
	for ev := range events.ResultChan() {
		wl, ok := ev.Object.(*kueue.Workload)
		if ev.Type == watch.Error || !ok {
			return
		}
		w.record(wl)
	}
}

func (w *admissionWatch) record(wl *kueue.Workload) {
	w.mu.Lock()
	defer w.mu.Unlock()
	has := wl.Status.Admission != nil
	if has && !w.admitted[wl.Name] {
		w.admissions[wl.Name]++
	}
	w.admitted[wl.Name] = has
	if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
		w.evicted[wl.Name] = true
	}
}

// check: want Workloads admitted, each once, none evicted.
func (w *admissionWatch) check(want int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for name, times := range w.admissions {
		if times > 1 {
			return fmt.Errorf("workload %s admitted %d times", name, times)
		}
		if w.admitted[name] {
			n++
		}
	}
	for name := range w.evicted {
		return fmt.Errorf("workload %s was evicted", name)
	}
	if n != want {
		return fmt.Errorf("the watch saw %d workloads admitted, want %d", n, want)
	}
	return nil
}

// checkNoHalfAdmission: every Workload is wholly admitted (admission,
// QuotaReserved and Admitted) and so in the manager's cache, or wholly
// pending, holding no quota there either. It returns the number of
// admitted Workloads and the cpu they hold.
func checkNoHalfAdmission(t *testing.T, m *testManager, ns string) (int, string) {
	t.Helper()
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n, total := 0, resource.Quantity{}
	for _, wl := range list.Items {
		reserved := meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		admitted := meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
		_, cached := m.Cache.Admitted(objectKey(ns, wl.Name))
		switch has := wl.Status.Admission != nil; {
		case has && reserved && admitted && cached:
			n++
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				total.Add(*psa.ResourceUsage.Cpu())
			}
		case !has && !reserved && !admitted && !cached:
		default:
			t.Errorf("workload %s half admitted: admission %v, QuotaReserved %v, Admitted %v, holds quota in the manager's cache %v",
				wl.Name, has, reserved, admitted, cached)
		}
	}
	return n, total.String()
}
