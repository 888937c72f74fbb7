package audit

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	wlpkg "github.com/kuota-dev/kuota/internal/workload"
)

// TestListReadsPodsAndJobs: List keeps the pods of managed jobs and finds,
// for each Workload holding quota, whether its job (same UID) exists.
func TestListReadsPodsAndJobs(t *testing.T) {
	hold := reserving("cq", "f", 1, usage{"cpu": "1"})
	orphan := func(wl *kueue.Workload) {
		wlAnnotation(wlpkg.JobOwnerGVKAnnotation, "batch/v1, Kind=Job")(wl)
		wlAnnotation(wlpkg.JobOwnerNameAnnotation, "j1")(wl)
		jobUID("u1")(wl)
	}
	widget := func(wl *kueue.Workload) {
		wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "uw", Controller: ptr.To(true)}}
	}
	objs := []client.Object{
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j1", UID: "u1"}},
		newWorkload("job-there", 1, hold, ownedBy("Job", "j1", "u1")),
		newWorkload("job-gone", 1, hold, ownedBy("Job", "j2", "u2")),
		newWorkload("job-recreated", 1, hold, ownedBy("Job", "j1", "old")),
		newWorkload("orphaned", 1, hold, orphan),
		newWorkload("pod-there", 1, hold, ownedByPod("p")),
		newWorkload("pod-gone", 1, hold, ownedByPod("q")),
		newWorkload("kind-gone", 1, hold, widget),
		newWorkload("pending", 1, ownedBy("Job", "j2", "u2")),
		newPod("p", managed()),
		newPod("unrelated"),
	}
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objs...).Build()
	got, err := List(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.PodsListed || len(got.Pods) != 1 || got.Pods[0].Name != "p" || !got.Pods[0].Managed {
		t.Errorf("pods kept: listed %v, %+v; want only the managed pod p", got.PodsListed, got.Pods)
	}
	want := map[string]bool{
		"ns/job-there": true, "ns/job-gone": false, "ns/job-recreated": false, "ns/orphaned": true,
		"ns/pod-there": true, "ns/pod-gone": false, "ns/kind-gone": false,
	}
	if !maps.Equal(got.JobExists, want) {
		t.Errorf("JobExists = %v\nwant       %v", got.JobExists, want)
	}

	// Skipping pods reads neither pods nor jobs.
	reads := 0
	counting := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			switch list.(type) {
			case *corev1.PodList, *metav1.PartialObjectMetadataList:
				reads++
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	r, err := RunWithOptions(context.Background(), counting, Options{SkipPods: true})
	if err != nil || reads != 0 || r.PodsChecked || len(ofKind(r, KindQuotaOfGoneJob)) != 0 {
		t.Errorf("SkipPods: err %v, %d pod or job lists, report:\n%s", err, reads, r)
	}
	r, err = RunWithOptions(context.Background(), counting, Options{})
	if err != nil || reads == 0 || !r.PodsChecked {
		t.Fatalf("default: err %v, %d pod or job lists", err, reads)
	}
	wantViolations(t, r, KindQuotaOfGoneJob,
		"Workload ns/job-gone: holds quota in ClusterQueue cq but its Job j2 is gone",
		"Workload ns/job-recreated: holds quota in ClusterQueue cq but its Job j1 is gone",
		"Workload ns/kind-gone: holds quota in ClusterQueue cq but its Widget w is gone",
		"Workload ns/pod-gone: holds quota in ClusterQueue cq but its Pod q is gone")
}

func TestListWrapsPodAndJobErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		fail func(client.ObjectList) bool
		want string
	}{
		{func(l client.ObjectList) bool { _, ok := l.(*corev1.PodList); return ok }, "listing pods"},
		{func(l client.ObjectList) bool { _, ok := l.(*metav1.PartialObjectMetadataList); return ok },
			"listing Job in namespace ns to find the jobs of Workloads"},
	} {
		c := fake.NewClientBuilder().WithScheme(newScheme(t)).
			WithObjects(newWorkload("a", 1, reserving("cq", "f", 1, usage{"cpu": "1"}), ownedBy("Job", "j", "u"))).
			WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if tc.fail(list) {
						return boom
					}
					return c.List(ctx, list, opts...)
				},
			}).Build()
		_, err := Run(context.Background(), c)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run = %v, want a wrapped error containing %q", err, tc.want)
		}
	}
}

// TestListedWhileTheClusterMoves: the cluster changes between the audit's
// lists. A pod group admitted and started in that window, and another
// created, reserved and started in it, are not reported: List reads the
// pods first and judges admissions as of then.
func TestListedWhileTheClusterMoves(t *testing.T) {
	now := time.Now()
	gated := newPod("a-0", inGroup("a"), pending(true))
	waiting := newWorkload("a", 1, wlAnnotation(groupWorkloadAnnotation, "true"))
	moved := false
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(gated, waiting).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil || moved {
				return err
			}
			moved = true
			// Group a is admitted and runs; group b appears, reserved and running.
			wl := &kueue.Workload{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(waiting), wl); err != nil {
				return err
			}
			admitted("cq", "f", 1, usage{"cpu": "1"})(wl)
			for i := range wl.Status.Conditions {
				wl.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now)
			}
			running := newPod("a-0", inGroup("a"))
			running.ResourceVersion = ""
			if err := c.Update(ctx, wl); err != nil {
				return err
			}
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(gated), p); err != nil {
				return err
			}
			p.Spec, p.Status = running.Spec, running.Status
			if err := c.Update(ctx, p); err != nil {
				return err
			}
			b := newWorkload("b", 1, wlAnnotation(groupWorkloadAnnotation, "true"), admitted("cq", "f", 1, usage{"cpu": "1"}))
			for i := range b.Status.Conditions {
				b.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now)
			}
			if err := c.Create(ctx, b); err != nil {
				return err
			}
			return c.Create(ctx, newPod("b-0", inGroup("b")))
		},
	}).Build()
	r, err := RunWithOptions(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !moved {
		t.Fatal("the cluster never moved")
	}
	for _, kind := range []string{KindPodWithoutAdmission, KindQuotaOfGoneJob} {
		if vs := ofKind(r, kind); len(vs) != 0 {
			t.Errorf("%s reported for a change made while listing: %v", kind, vs)
		}
	}

	// Judged again once settled, the same cluster is consistent too, and a
	// group that really has lost its pods is reported.
	r, err = RunWithOptions(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if vs := append(ofKind(r, KindPodWithoutAdmission), ofKind(r, KindQuotaOfGoneJob)...); len(vs) != 0 {
		t.Errorf("settled cluster: %v", vs)
	}
	if err := c.Delete(context.Background(), newPod("b-0")); err != nil {
		t.Fatal(err)
	}
	objs, err := List(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	objs.PodsListedAt = now.Add(time.Minute)

	wantViolations(t, Check(objs, Options{Now: func() time.Time { return now.Add(time.Minute) }}), KindQuotaOfGoneJob,
		"Workload ns/b: holds quota in ClusterQueue cq but its pod group b is gone")
}
