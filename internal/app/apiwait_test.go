package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// changingDiscovery serves the kueue.x-k8s.io kinds it is given, which a
// test may change while WaitForAPI polls.
type changingDiscovery struct {
	*fakediscovery.FakeDiscovery
	mu    sync.Mutex
	kinds []string
	err   error
}

func newChangingDiscovery(kinds ...string) *changingDiscovery {
	return &changingDiscovery{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}, kinds: kinds}
}

func (d *changingDiscovery) set(err error, kinds ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kinds, d.err = kinds, err
}

func (d *changingDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return nil, d.err
	}
	if gv != kueue.GroupVersion.String() || len(d.kinds) == 0 {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, k := range d.kinds {
		list.APIResources = append(list.APIResources, metav1.APIResource{Kind: k, Name: strings.ToLower(k) + "s"})
	}
	return list, nil
}

func fastPoll(t *testing.T) {
	old := apiPoll
	apiPoll = 10 * time.Millisecond
	t.Cleanup(func() { apiPoll = old })
}

func TestWaitForAPIReturnsOnceTheCRDsAreServed(t *testing.T) {
	fastPoll(t)
	disc := newChangingDiscovery()
	go func() {
		time.Sleep(50 * time.Millisecond)
		disc.set(errors.New("connection refused"))
		time.Sleep(50 * time.Millisecond)
		disc.set(nil, requiredKinds[:2]...)
		time.Sleep(50 * time.Millisecond)
		disc.set(nil, requiredKinds...)
	}()
	if err := WaitForAPI(context.Background(), disc, time.Minute); err != nil {
		t.Fatalf("WaitForAPI: %v", err)
	}
	if missing, _ := missingKinds(disc); len(missing) != 0 {
		t.Fatalf("returned while %v are missing", missing)
	}
}

func TestWaitForAPINamesTheMissingKinds(t *testing.T) {
	fastPoll(t)
	disc := newChangingDiscovery("Workload", "ClusterQueue", "LocalQueue", "ResourceFlavor", "AdmissionCheck")
	err := WaitForAPI(context.Background(), disc, 50*time.Millisecond)
	if err == nil {
		t.Fatal("WaitForAPI returned no error while Cohort and WorkloadPriorityClass are not served")
	}
	for _, want := range []string{"Cohort", "WorkloadPriorityClass", "kueue.x-k8s.io/v1beta2", "install the CRDs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "LocalQueue") {
		t.Errorf("error %q names a served kind", err)
	}
}

func TestWaitForAPIReportsDiscoveryErrors(t *testing.T) {
	fastPoll(t)
	disc := newChangingDiscovery()
	disc.set(errors.New("connection refused"))
	err := WaitForAPI(context.Background(), disc, 0)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("WaitForAPI = %v, want the discovery error", err)
	}
}

func TestWaitForAPIStopsWithItsContext(t *testing.T) {
	fastPoll(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	if err := WaitForAPI(ctx, newChangingDiscovery(), time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitForAPI = %v, want context.Canceled", err)
	}
}
