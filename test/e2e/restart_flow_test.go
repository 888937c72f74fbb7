package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/audit"
	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Batch Jobs of two priorities (so that some are preempted), pod groups
// and JobSets flow through a ClusterQueue too small for all of them while
// the manager is SIGKILLed and restarted three times (`make torture`,
// KUOTA_TORTURE=1: three times the jobs and twelve restarts). Sampled
// every 200 ms, the running pods never ask for more than the
// ClusterQueue's quota; after each restart and at the end the audit (pods
// against admissions included) is clean; at the end every job finished
// and the ClusterQueue uses nothing.
func TestJobsAndPodGroupsThroughManagerKills(t *testing.T) {
	logOnFailure(t)
	const quota = 4
	scale, restarts := 1, []time.Duration{5 * time.Second, 7 * time.Second, 7 * time.Second}
	if os.Getenv("KUOTA_TORTURE") != "" {
		scale, restarts = 3, nil
		for i := range 12 {
			restarts = append(restarts, time.Duration(3+i%3*2)*time.Second)
		}
	}
	ns, cq := queues(t, fmt.Sprint(quota))
	low, high := priorityClasses(t, ns)
	flow := restartFlow(ns, low, high, scale)
	sampler := sampleRunningCPU(ns, quota*1000, 200*time.Millisecond)
	defer sampler.stop()

	created := make(chan error, 1)
	go func() { created <- flow.create(context.Background(), 700*time.Millisecond) }()
	for i, at := range restarts {
		time.Sleep(at)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := suite.restartManager(ctx)
		cancel()
		if err != nil {
			t.Fatalf("restart %d: %v", i+1, err)
		}
		t.Logf("restart %d: the manager was back in %s", i+1, time.Since(start).Round(time.Millisecond))
		podAudit(t, ns, fmt.Sprintf("after restart %d", i+1), 0)
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Duration(scale)*90*time.Second, "every job finished", flow.finished)
	samples, peak, over := sampler.stop()
	t.Logf("%d samples of the running pods' cpu: peak %dm of %d", samples, peak, quota)
	if len(over) > 0 {
		t.Errorf("running pods asked for more than the ClusterQueue's quota (%d cpu):\n%s", quota, strings.Join(over, "\n"))
	}
	if samples < 50 {
		t.Errorf("only %d samples of the running pods", samples)
	}
	if n := preemptions(t, ns); n == 0 {
		t.Error("no Workload was preempted: the flow does not exercise preemption")
	} else {
		t.Logf("%d preemptions", n)
	}
	waitReserving(t, cq, 0)
	eventually(t, 10*time.Second, "the ClusterQueue uses nothing", func() error { return zeroUsage(cq) })
	cleanAudit(t, ns)
}

// preemptions counts the preemptions of the namespace's Workloads.
func preemptions(t *testing.T, ns string) int32 {
	t.Helper()
	var list kueue.WorkloadList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var n int32
	for _, wl := range list.Items {
		if st := wl.Status.SchedulingStats; st != nil {
			for _, e := range st.Evictions {
				if e.Reason == kueue.WorkloadEvictedByPreemption {
					n += e.Count
				}
			}
		}
	}
	return n
}

// flowItem is a job of the flow: made once, checked until it finished.
type flowItem struct {
	objs     []client.Object
	finished func() error
}

type jobFlow struct{ items []flowItem }

// restartFlow is 20 batch Jobs (every third one high priority), 6 pod
// groups and, when the JobSet controller runs, 2 JobSets (high priority:
// a preempted group's pods are deleted and never come back), interleaved,
// all scale times. Each pod asks for 1 cpu and runs 2 s.
func restartFlow(ns, low, high string, scale int) *jobFlow {
	f := &jobFlow{}
	groups, jobSets := 0, 0
	for i := range 20 * scale {
		prio := low
		if i%3 == 2 {
			prio = high
		}
		f.items = append(f.items, batchJobItem(ns, fmt.Sprintf("job-%d", i), prio))
		if i%3 == 1 && groups < 6*scale {
			f.items = append(f.items, podGroupItem(ns, fmt.Sprintf("group-%d", groups), high))
			groups++
		}
		if (i%20 == 6 || i%20 == 13) && suite.jobSet.skip == "" {
			f.items = append(f.items, jobSetItem(ns, fmt.Sprintf("set-%d", jobSets), high))
			jobSets++
		}
	}
	return f
}

// create makes the items one every interval; a creation refused while the
// manager is down (its webhooks do not answer) is tried again.
func (f *jobFlow) create(ctx context.Context, interval time.Duration) error {
	for _, it := range f.items {
		for _, o := range it.objs {
			if err := createRetrying(ctx, o); err != nil {
				return err
			}
		}
		time.Sleep(interval)
	}
	return nil
}

// finished reports the first item not finished yet.
func (f *jobFlow) finished() error {
	for _, it := range f.items {
		if err := it.finished(); err != nil {
			return err
		}
	}
	return nil
}

func createRetrying(ctx context.Context, o client.Object) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := suite.client.Create(ctx, o.DeepCopyObject().(client.Object))
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func batchJobItem(ns, name, prio string) flowItem {
	j := job(ns, name, "lq", 2, 2, "1")
	j.Labels[jobframework.PriorityClassLabel] = prio
	j.Spec.Template.Annotations = map[string]string{devcluster.RunForAnnotation: "2s"}
	return flowItem{objs: []client.Object{j}, finished: func() error {
		var got batchv1.Job
		if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(j), &got); err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("job %s: succeeded %d, active %d, suspended %v", name, got.Status.Succeeded, got.Status.Active,
			ptr.Deref(got.Spec.Suspend, false))
	}}
}

func podGroupItem(ns, group, prio string) flowItem {
	var objs []client.Object
	for i := range 2 {
		p := groupPod(ns, group, i, 2, "2s")
		p.Labels[jobframework.PriorityClassLabel] = prio
		objs = append(objs, p)
	}
	return flowItem{objs: objs, finished: func() error {
		for _, o := range objs {
			p, err := getPod(ns, o.GetName())
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodSucceeded {
				return fmt.Errorf("pod %s of group %s: %s, gated %v", p.Name, group, p.Status.Phase, jobframework.IsGated(p))
			}
		}
		return nil
	}}
}

func jobSetItem(ns, name, prio string) flowItem {
	rj := jobsetapi.ReplicatedJob{Name: "w", Replicas: 2, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{devcluster.RunForAnnotation: "2s"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		}}}}
	js := &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{jobframework.QueueNameLabel: "lq", jobframework.PriorityClassLabel: prio}},
		Spec: jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{rj}},
	}
	return flowItem{objs: []client.Object{js}, finished: func() error {
		var got jobsetapi.JobSet
		if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(js), &got); err != nil {
			return err
		}
		if meta.IsStatusConditionTrue(got.Status.Conditions, string(jobsetapi.JobSetCompleted)) {
			return nil
		}
		return fmt.Errorf("jobset %s: suspended %v, status %+v", name, ptr.Deref(got.Spec.Suspend, false), got.Status.ReplicatedJobsStatus)
	}}
}

// priorityClasses creates a low and a high WorkloadPriorityClass for the test.
func priorityClasses(t *testing.T, ns string) (low, high string) {
	t.Helper()
	low, high = ns+"-low", ns+"-high"
	create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: low}, Value: 10},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: high}, Value: 1000})
	t.Cleanup(func() {
		for _, n := range []string{low, high} {
			_ = suite.client.Delete(context.Background(), &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	})
	return low, high
}

// cpuSampler sums, at every tick, the cpu requests of the pods of managed
// jobs in a namespace that hold a node (scheduled, not finished; being
// deleted included: they run through their grace period).
type cpuSampler struct {
	ns string
	// limit is the quota in millicpu.
	limit    int64
	quit     chan struct{}
	done     chan struct{}
	once     sync.Once
	samples  int
	peak     int64
	overList []string
}

// sampleRunningCPU samples until stop; a sum above limit (millicpu) is
// recorded with the pods that made it.
func sampleRunningCPU(ns string, limit int64, every time.Duration) *cpuSampler {
	s := &cpuSampler{ns: ns, limit: limit, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample() {
	var list corev1.PodList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(s.ns)); err != nil {
		return
	}
	var sum int64
	var who []string
	for i := range list.Items {
		p := &list.Items[i]
		managed := p.Labels[jobframework.ManagedLabel] == "true" || p.Annotations[jobframework.WorkloadAnnotation] != ""
		if !managed || p.Spec.NodeName == "" || jobframework.IsTerminal(p) {
			continue
		}
		for _, c := range p.Spec.Containers {
			sum += c.Resources.Requests.Cpu().MilliValue()
		}
		who = append(who, fmt.Sprintf("%s (%s, workload %s)", p.Name, p.Status.Phase, p.Annotations[jobframework.WorkloadAnnotation]))
	}
	s.samples++
	s.peak = max(s.peak, sum)
	if sum > s.limit && len(s.overList) < 10 {
		s.overList = append(s.overList, fmt.Sprintf("  %s: %dm: %s", time.Now().Format("15:04:05.000"), sum, strings.Join(who, ", ")))
	}
}

// stop ends the sampling and returns the number of samples, the peak in
// millicpu and the samples above the quota.
func (s *cpuSampler) stop() (samples int, peak int64, over []string) {
	s.once.Do(func() { close(s.quit) })
	<-s.done
	return s.samples, s.peak, s.overList
}

// zeroUsage checks that a ClusterQueue's status shows no usage at all.
func zeroUsage(cq string) error {
	var q kueue.ClusterQueue
	if err := suite.client.Get(context.Background(), client.ObjectKey{Name: cq}, &q); err != nil {
		return err
	}
	for _, fu := range append(q.Status.FlavorsReservation, q.Status.FlavorsUsage...) {
		for _, r := range fu.Resources {
			if !r.Total.IsZero() {
				return fmt.Errorf("%s %s %s still in use", fu.Name, r.Name, r.Total.String())
			}
		}
	}
	if q.Status.ReservingWorkloads != 0 || q.Status.AdmittedWorkloads != 0 {
		return fmt.Errorf("reserving %d, admitted %d", q.Status.ReservingWorkloads, q.Status.AdmittedWorkloads)
	}
	return nil
}

// cleanAudit runs `kuota audit`'s checks, pods included, until the
// violations about the test's objects (named after its namespace) are
// gone; others, left by other tests, are logged.
func cleanAudit(t *testing.T, ns string) {
	t.Helper()
	var rep *audit.Report
	eventually(t, 20*time.Second, "a clean audit", func() error {
		var err error
		if rep, err = audit.Run(context.Background(), suite.client); err != nil {
			return err
		}
		var mine []string
		for _, v := range rep.Violations {
			if strings.Contains(v.Object, ns) {
				mine = append(mine, v.String())
			}
		}
		if len(mine) > 0 {
			return fmt.Errorf("violations:\n%s", strings.Join(mine, "\n"))
		}
		return nil
	})
	if !rep.PodsChecked {
		t.Error("the audit did not check pods")
	}
	t.Logf("audit: %s", rep)
}

// podAudit runs the audit once and fails on what its pod checks report
// about the test's objects: while jobs run, are preempted and are
// deleted, no pod runs without an admitted Workload and no Workload holds
// quota for a job that is gone. grace is audit.Options.PodGrace (0: the
// default).
func podAudit(t *testing.T, ns, when string, grace time.Duration) {
	t.Helper()
	rep, err := audit.RunWithOptions(context.Background(), suite.client, audit.Options{PodGrace: grace})
	if err != nil {
		t.Fatalf("audit %s: %v", when, err)
	}
	for _, v := range rep.Violations {
		if (v.Kind == audit.KindPodWithoutAdmission || v.Kind == audit.KindQuotaOfGoneJob) && strings.Contains(v.Object, ns) {
			t.Errorf("audit %s: %s", when, v)
		}
	}
}

// logOnFailure prints the end of the manager's log when the test fails.
func logOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			suite.dumpLog(&b)
			t.Log(b.String())
		}
	})
}
