package mkdispatch

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller/multicluster"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/multikueue"
)

// pausableProxy forwards TCP connections to an API server; paused, it
// holds every byte both ways, as a worker whose API server was stopped
// (SIGSTOP) holds them: connections open, no answer.
type pausableProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	paused bool
	resume *sync.Cond
}

func newPausableProxy(t *testing.T, target string) *pausableProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausableProxy{ln: ln, target: target}
	p.resume = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() {
		p.setPaused(false)
		ln.Close()
	})
	return p
}

func (p *pausableProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *pausableProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.paused {
			p.resume.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}

func (p *pausableProxy) setPaused(paused bool) {
	p.mu.Lock()
	p.paused = paused
	p.mu.Unlock()
	p.resume.Broadcast()
}

// throughProxy is kubeconfig with its server reached through a proxy; it
// returns the kubeconfig and the proxy.
func throughProxy(t *testing.T, kubeconfig []byte) ([]byte, *pausableProxy) {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var p *pausableProxy
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		p = newPausableProxy(t, u.Host)
		u.Host = p.ln.Addr().String()
		c.Server = u.String()
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out, p
}

// TestUnansweringWorkerDoesNotHoldDispatchBack: one worker stops answering
// (its connections held open) while the other serves; a new Job is still
// copied to the other, admitted there and runs, well before the stuck
// worker's connections would break by themselves.
func TestUnansweringWorkerDoesNotHoldDispatchBack(t *testing.T) {
	viaProxy, proxy := throughProxy(t, worker1.KubeConfig())
	ns := setupWith(t, viaProxy, worker2.KubeConfig())
	startManager(t, manager)
	startManager(t, worker2)
	waitCheck(t, ns, multikueue.ReasonSomeActiveClusters)
	for _, w := range []string{ns + "-worker1", ns + "-worker2"} {
		waitCluster(t, w, metav1.ConditionTrue, multicluster.ReasonConnected)
	}

	proxy.setPaused(true)
	job := newJob(ns, "train", 1, "1")
	create(t, manager, job)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	dumpOnFailure(t, wlKey)
	start := time.Now()
	var last error
	for deadline := start.Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var wl kueue.Workload
		if last = manager.Client.Get(context.Background(), wlKey, &wl); last != nil {
			continue
		}
		if ptr.Deref(wl.Status.ClusterName, "") != ns+"-worker2" || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			last = fmt.Errorf("clusterName %v, conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
			continue
		}
		t.Logf("admitted in worker2 %s after the Job was created, worker1 not answering", time.Since(start).Round(time.Second))
		return
	}
	t.Fatalf("not admitted in worker2 within 40s while worker1 does not answer: %v", last)
}
