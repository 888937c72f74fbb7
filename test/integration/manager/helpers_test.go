package manager

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// testManager is a manager started by a test; Stop may be called more than
// once (the test stops it to restart, the cleanup stops it again).
type testManager struct {
	*framework.Manager
	once sync.Once
	err  error
}

// Stop stops the manager once and returns the outcome of that stop.
func (m *testManager) Stop() error {
	m.once.Do(func() { m.err = m.Manager.Stop() })
	return m.err
}

// current is the manager the running test started last (tests of this
// package run one at a time).
var current *testManager

// startManager runs a manager for the test and stops it at cleanup.
func startManager(t *testing.T, mutate ...func(*configapi.Configuration)) *testManager {
	t.Helper()
	return startPrepared(t, nil, mutate...)
}

// startPrepared is startManager with prepare called on the manager before
// it starts.
func startPrepared(t *testing.T, prepare func(*app.Manager), mutate ...func(*configapi.Configuration)) *testManager {
	t.Helper()
	return startWith(t, nil, prepare, mutate...)
}

// startWith is startPrepared with the app.Options changed by override
// (nil: the test defaults).
func startWith(t *testing.T, override func(*app.Options), prepare func(*app.Manager), mutate ...func(*configapi.Configuration)) *testManager {
	t.Helper()
	cfg, err := framework.ManagerConfig(mutate...)
	if err != nil {
		t.Fatal(err)
	}
	fm, err := env.StartManagerWithPrepared(cfg, override, prepare)
	if err != nil {
		t.Fatal(err)
	}
	m := &testManager{Manager: fm}
	current = m
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	return m
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// namespace creates a namespace for the test.
func namespace(t *testing.T) string {
	t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func flavor(name string, labels map[string]string) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ResourceFlavorSpec{NodeLabels: labels}}
}

// clusterQueue builds a ClusterQueue with cpu quota in one flavor; open to
// every namespace.
func clusterQueue(name, cohort, flavorName, nominal string, mutate ...func(*kueue.ClusterQueue)) *kueue.ClusterQueue {
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName:        kueue.CohortReference(cohort),
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavorName),
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)}}}},
		}},
	}}
	for _, m := range mutate {
		m(cq)
	}
	return cq
}

func localQueue(ns, name, cq string) *kueue.LocalQueue {
	return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
}

// newWorkload builds a Workload of count pods requesting cpu each.
func newWorkload(ns, name, lq string, count int32, cpu string, priority int32) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.WorkloadSpec{
		QueueName: kueue.LocalQueueName(lq),
		Priority:  ptr.To(priority),
		PodSets: []kueue.PodSet{{Name: "main", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		}}}},
	}}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testutil.Eventually(t, timeout, 50*time.Millisecond, what, cond)
}

func getWorkload(t *testing.T, ns, name string) *kueue.Workload {
	t.Helper()
	var wl kueue.Workload
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

// condition returns a workload condition's status and reason.
func condition(wl *kueue.Workload, typ string) (metav1.ConditionStatus, string) {
	c := meta.FindStatusCondition(wl.Status.Conditions, typ)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

// waitAdmitted waits until the workload is admitted, in the given queue.
func waitAdmitted(t *testing.T, ns, name, cq string) {
	t.Helper()
	eventually(t, 45*time.Second, fmt.Sprintf("workload %s admitted", name), func() error {
		wl := getWorkload(t, ns, name)
		if st, _ := condition(wl, kueue.WorkloadAdmitted); st != metav1.ConditionTrue {
			return fmt.Errorf("Admitted=%q, conditions %v", st, wl.Status.Conditions)
		}
		if wl.Status.Admission == nil || string(wl.Status.Admission.ClusterQueue) != cq {
			return fmt.Errorf("admission %+v, want ClusterQueue %s", wl.Status.Admission, cq)
		}
		return nil
	})
}

// waitPending waits until the workload waits with the given reason.
func waitPending(t *testing.T, ns, name, reason string) {
	t.Helper()
	eventually(t, 45*time.Second, fmt.Sprintf("workload %s pending (%s)", name, reason), func() error {
		wl := getWorkload(t, ns, name)
		st, r := condition(wl, kueue.WorkloadQuotaReserved)
		if st != metav1.ConditionFalse || r != reason || wl.Status.Admission != nil {
			return fmt.Errorf("QuotaReserved=%q reason %q admission %v", st, r, wl.Status.Admission)
		}
		return nil
	})
}

// finish marks a workload Finished, as its job would.
func finish(t *testing.T, ns, name string) {
	t.Helper()
	wl := getWorkload(t, ns, name)
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: kueue.WorkloadFinishedSucceeded, Message: "done"})
	if err := env.Client.Status().Update(context.Background(), wl); err != nil {
		t.Fatalf("finishing %s: %v", name, err)
	}
}

// waitQueueStatus waits until a ClusterQueue's status satisfies check.
func waitQueueStatus(t *testing.T, name string, check func(*kueue.ClusterQueueStatus) error) {
	t.Helper()
	eventually(t, 45*time.Second, "ClusterQueue "+name+" status", func() error {
		var cq kueue.ClusterQueue
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &cq); err != nil {
			return err
		}
		return check(&cq.Status)
	})
}

// reservedCPU returns the reserved cpu of a flavor in a ClusterQueue status.
func reservedCPU(st *kueue.ClusterQueueStatus, flavorName string) string {
	for _, f := range st.FlavorsReservation {
		if string(f.Name) == flavorName {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU {
					return r.Total.String()
				}
			}
		}
	}
	return "0"
}

// scoped names a cluster-scoped object (ClusterQueue, ResourceFlavor,
// Cohort, AdmissionCheck) after the test's namespace, so that names are
// unique across tests and repeated runs.
func scoped(ns, name string) string { return ns + "-" + name }

// strict makes a ClusterQueue StrictFIFO.
func strict(cq *kueue.ClusterQueue) { cq.Spec.QueueingStrategy = kueue.StrictFIFO }

// preemption sets a ClusterQueue's preemption policies.
func preemption(within, reclaim kueue.PreemptionPolicy) func(*kueue.ClusterQueue) {
	return func(cq *kueue.ClusterQueue) {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: within, ReclaimWithinCohort: reclaim}
	}
}

// limits sets the cpu borrowingLimit and lendingLimit ("" leaves one unset).
func limits(borrowing, lending string) func(*kueue.ClusterQueue) {
	return func(cq *kueue.ClusterQueue) {
		q := &cq.Spec.ResourceGroups[0].Flavors[0].Resources[0]
		if borrowing != "" {
			q.BorrowingLimit = ptr.To(resource.MustParse(borrowing))
		}
		if lending != "" {
			q.LendingLimit = ptr.To(resource.MustParse(lending))
		}
	}
}

// update reads an object, applies mutate and writes it back (the spec),
// retrying on conflicts.
func update[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	updateWith(t, obj, mutate, func(o T) error { return env.Client.Update(context.Background(), o) })
}

// updateStatus is update for the status subresource.
func updateStatus[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	updateWith(t, obj, mutate, func(o T) error { return env.Client.Status().Update(context.Background(), o) })
}

func updateWith[T client.Object](t *testing.T, obj T, mutate func(T), write func(T) error) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	var err error
	for range 20 {
		if err = env.Client.Get(context.Background(), key, obj); err != nil {
			t.Fatalf("reading %T %s: %v", obj, key, err)
		}
		mutate(obj)
		if err = write(obj); err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("updating %T %s: %v", obj, key, err)
}

// setActive sets a workload's spec.active.
func setActive(t *testing.T, ns, name string, active bool) {
	t.Helper()
	update(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		func(wl *kueue.Workload) { wl.Spec.Active = ptr.To(active) })
}

// waitWorkload waits until check accepts the workload.
func waitWorkload(t *testing.T, ns, name, what string, check func(*kueue.Workload) error) {
	t.Helper()
	eventually(t, 45*time.Second, fmt.Sprintf("workload %s %s", name, what), func() error {
		return check(getWorkload(t, ns, name))
	})
}

// hasCondition checks a workload condition's status and reason.
func hasCondition(wl *kueue.Workload, typ string, status metav1.ConditionStatus, reason string) error {
	if st, r := condition(wl, typ); st != status || r != reason {
		return fmt.Errorf("%s=%q reason %q, want %s reason %s", typ, st, r, status, reason)
	}
	return nil
}

// waitEvicted waits until the workload was evicted with the reason and its
// reservation was cleared (Kuota plays the job's part for workloads without
// an owner).
func waitEvicted(t *testing.T, ns, name, reason string) {
	t.Helper()
	waitWorkload(t, ns, name, "evicted ("+reason+") and released", func(wl *kueue.Workload) error {
		if err := hasCondition(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, reason); err != nil {
			return err
		}
		if st, _ := condition(wl, kueue.WorkloadQuotaReserved); st != metav1.ConditionFalse || wl.Status.Admission != nil {
			return fmt.Errorf("QuotaReserved=%q admission %v", st, wl.Status.Admission)
		}
		if st, _ := condition(wl, kueue.WorkloadAdmitted); st == metav1.ConditionTrue {
			return fmt.Errorf("still Admitted=True")
		}
		return nil
	})
}

// quietCycles is how many scheduling cycles a "nothing happens" check
// waits for.
const quietCycles = 3

// afterCycles waits for n more scheduling cycles of the current manager
// (waking it each time), calling check after each; it fails the test at
// the first error check returns.
func afterCycles(t *testing.T, n int, check func() error) {
	t.Helper()
	if current == nil {
		t.Fatal("no manager runs")
	}
	if err := current.WaitCycles(n, 10*time.Second, check); err != nil {
		t.Fatal(err)
	}
}

// stayPending checks that, over the next quietCycles scheduling cycles,
// none of the workloads gets a reservation.
func stayPending(t *testing.T, ns string, names ...string) {
	t.Helper()
	afterCycles(t, quietCycles, func() error {
		for _, name := range names {
			wl := getWorkload(t, ns, name)
			if wl.Status.Admission != nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
				return fmt.Errorf("workload %s got a reservation: %+v", name, wl.Status.Admission)
			}
		}
		return nil
	})
}

// stayAdmitted checks that, over the next quietCycles scheduling cycles,
// the workloads keep their admission.
func stayAdmitted(t *testing.T, ns string, names ...string) {
	t.Helper()
	afterCycles(t, quietCycles, func() error {
		for _, name := range names {
			wl := getWorkload(t, ns, name)
			if wl.Status.Admission == nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) ||
				meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
				return fmt.Errorf("workload %s lost its admission: conditions %v", name, wl.Status.Conditions)
			}
		}
		return nil
	})
}

// admittedIn lists the workloads of a namespace admitted in a ClusterQueue.
func admittedIn(t *testing.T, ns, cq string) []string {
	t.Helper()
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, wl := range list.Items {
		if wl.Status.Admission != nil && string(wl.Status.Admission.ClusterQueue) == cq &&
			meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			out = append(out, wl.Name)
		}
	}
	return out
}

// events lists the events about an object of the namespace.
func events(t *testing.T, ns, name string) []corev1.Event {
	t.Helper()
	var list corev1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// countEvents counts the events about an object with the reason (repeats of
// one event included).
func countEvents(t *testing.T, ns, name, reason string) int {
	t.Helper()
	n := 0
	for _, e := range events(t, ns, name) {
		if e.Reason == reason {
			n += int(max(e.Count, 1))
		}
	}
	return n
}

// waitEvent waits for an event about an object with the type and reason;
// it returns the event's message.
func waitEvent(t *testing.T, ns, name, typ, reason string) string {
	t.Helper()
	var msg string
	// Events are written one at a time after the fact, and client-go
	// waits up to 10 s before it retries a write the API server failed:
	// on a loaded machine the event can trail the status it reports by
	// more than the 45 s the status waits allow.
	eventually(t, 90*time.Second, fmt.Sprintf("%s event %s on %s", typ, reason, name), func() error {
		var seen []string
		for _, e := range events(t, ns, name) {
			if e.Type == typ && e.Reason == reason {
				msg = e.Message
				return nil
			}
			seen = append(seen, e.Type+"/"+e.Reason)
		}
		return fmt.Errorf("events seen: %s", strings.Join(seen, ", "))
	})
	return msg
}

// cpuUsage returns a flavor's cpu total and borrowed amount in a list of
// flavor usages (flavorsReservation or flavorsUsage).
func cpuUsage(usages []kueue.FlavorUsage, flavorName string) (total, borrowed string) {
	for _, f := range usages {
		if string(f.Name) == flavorName {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU {
					return r.Total.String(), r.Borrowed.String()
				}
			}
		}
	}
	return "0", "0"
}

// waitUsage waits until a ClusterQueue reports the cpu totals and borrowed
// amounts, both in flavorsReservation and flavorsUsage (every workload here
// is admitted once reserved), and the number of reserving workloads.
func waitUsage(t *testing.T, cq, flavorName string, reserving int32, total, borrowed string) {
	t.Helper()
	waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
		rt, rb := cpuUsage(st.FlavorsReservation, flavorName)
		ut, ub := cpuUsage(st.FlavorsUsage, flavorName)
		if st.ReservingWorkloads != reserving || st.AdmittedWorkloads != reserving || rt != total || rb != borrowed || ut != total || ub != borrowed {
			return fmt.Errorf("reserving %d admitted %d reservation %s (borrowed %s) usage %s (borrowed %s); want %d, %s (borrowed %s)",
				st.ReservingWorkloads, st.AdmittedWorkloads, rt, rb, ut, ub, reserving, total, borrowed)
		}
		return nil
	})
}

// waitClusterQueueActive waits for a ClusterQueue's Active condition.
func waitClusterQueueActive(t *testing.T, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	waitQueueStatus(t, name, func(st *kueue.ClusterQueueStatus) error {
		c := meta.FindStatusCondition(st.Conditions, kueue.ClusterQueueActive)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Active condition %+v, want %s reason %s", c, status, reason)
		}
		return nil
	})
}

// pendingOf returns those of the workloads that hold no reservation.
func pendingOf(t *testing.T, ns string, names ...string) []string {
	t.Helper()
	var out []string
	for _, name := range names {
		if getWorkload(t, ns, name).Status.Admission == nil {
			out = append(out, name)
		}
	}
	return out
}

func objectKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// singleQueue creates, for the test, a namespace with a LocalQueue "lq"
// pointing at a ClusterQueue with nominal cpu in a flavor of its own.
func singleQueue(t *testing.T, nominal string) (ns, cq, fl string) {
	t.Helper()
	ns = namespace(t)
	cq, fl = scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, nominal), localQueue(ns, "lq", cq))
	return ns, cq, fl
}
