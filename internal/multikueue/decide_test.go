package multikueue

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

var now = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func workload(state kueue.CheckState, conds ...string) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}
	for _, c := range conds {
		wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
	}
	wl.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "mk", State: state}}
	return wl
}

func reservedCopy() *kueue.Workload {
	return workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved)
}

// nominated is a reserved workload whose copies went to clusters.
func nominated(clusters ...string) *kueue.Workload {
	wl := workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved)
	wl.Status.NominatedClusterNames = clusters
	return wl
}

func TestDecide(t *testing.T) {
	pendingCopy := workload(kueue.CheckStatePending)
	placed := workload(kueue.CheckStateReady, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted)
	placed.Status.ClusterName = ptr.To("w1")
	tests := map[string]struct {
		in    Input
		check func(t *testing.T, d Decision)
	}{
		"a reserved workload is copied to every connected cluster and they are nominated": {
			in: Input{Workload: workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved), Clusters: []string{"w1", "w2"},
				Remotes: map[string]Remote{"w1": {}, "w2": {Workload: pendingCopy}}},
			check: func(t *testing.T, d Decision) {
				if !slices.Equal(d.CreateWorkload, []string{"w1"}) || !slices.Equal(d.Nominate, []string{"w1", "w2"}) || d.ClusterName != nil {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"the first cluster that reserves gets it: the other copy goes, the job is created, the check is Ready": {
			in: Input{Workload: nominated("w1", "w2"), Clusters: []string{"w1", "w2"},
				Remotes: map[string]Remote{"w1": {Workload: pendingCopy}, "w2": {Workload: reservedCopy()}}},
			check: func(t *testing.T, d Decision) {
				if ptr.Deref(d.ClusterName, "") != "w2" || d.CreateJob != "w2" || !slices.Equal(d.Delete, []string{"w1"}) ||
					d.State == nil || d.State.State != kueue.CheckStateReady {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a placed workload mirrors its job and leaves the other clusters empty": {
			in: Input{Workload: placed, Clusters: []string{"w1", "w2"},
				Remotes: map[string]Remote{"w1": {Workload: reservedCopy(), Job: true}, "w2": {Workload: pendingCopy}}},
			check: func(t *testing.T, d Decision) {
				if d.SyncFrom != "w1" || d.CreateJob != "" || !slices.Equal(d.Delete, []string{"w2"}) || d.State != nil {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a placed workload whose copy is gone is retried": {
			in: Input{Workload: placed, Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {}}},
			check: func(t *testing.T, d Decision) {
				if d.State == nil || d.State.State != kueue.CheckStateRetry {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a lost worker is waited for until the timeout": {
			in: Input{Workload: placed, Remotes: map[string]Remote{}, LostSince: now.Add(-time.Minute), WorkerLostTimeout: 15 * time.Minute, Now: now},
			check: func(t *testing.T, d Decision) {
				if d.State != nil || d.After != 14*time.Minute {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"then retried": {
			in: Input{Workload: placed, Remotes: map[string]Remote{}, LostSince: now.Add(-16 * time.Minute), WorkerLostTimeout: 15 * time.Minute, Now: now},
			check: func(t *testing.T, d Decision) {
				if d.State == nil || d.State.State != kueue.CheckStateRetry {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"an evicted workload loses its copies, its job and its placement": {
			in: Input{Workload: func() *kueue.Workload {
				wl := placed.DeepCopy()
				wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue})
				return wl
			}(), Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {Workload: reservedCopy(), Job: true}}},
			check: func(t *testing.T, d Decision) {
				if !slices.Equal(d.Delete, []string{"w1"}) || !d.ClearPlacement || !d.Stopping {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a finished workload keeps its clusterName": {
			in: Input{Workload: func() *kueue.Workload {
				wl := placed.DeepCopy()
				wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue})
				return wl
			}(), Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {Workload: reservedCopy(), Job: true}}},
			check: func(t *testing.T, d Decision) {
				if !slices.Equal(d.Delete, []string{"w1"}) || d.ClearPlacement || d.Stopping {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a workload preempted in its worker is retried here, with the worker's reason": {
			in: Input{Workload: placed, Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {Workload: func() *kueue.Workload {
				wl := reservedCopy()
				wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted,
					Status: metav1.ConditionTrue, Reason: kueue.WorkloadPreempted, Message: "Preempted to accommodate a higher priority Workload"})
				return wl
			}(), Job: true}}},
			check: func(t *testing.T, d Decision) {
				if d.State == nil || d.State.State != kueue.CheckStateRetry || !strings.Contains(d.State.Message, "Preempted to accommodate") ||
					d.SyncFrom != "" {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a copy whose reservation the worker released is retried": {
			in: Input{Workload: placed, Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {Workload: pendingCopy, Job: true}}},
			check: func(t *testing.T, d Decision) {
				if d.State == nil || d.State.State != kueue.CheckStateRetry {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a copy that finished in its worker is not retried": {
			in: Input{Workload: placed, Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {
				Workload: workload(kueue.CheckStatePending, kueue.WorkloadFinished), Job: true}}},
			check: func(t *testing.T, d Decision) {
				if d.State != nil || d.SyncFrom != "w1" {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a connected worker taken out of the config keeps mirroring its running workload": {
			in: Input{Workload: placed, Clusters: []string{"w2"},
				Remotes: map[string]Remote{"w1": {Workload: reservedCopy(), Job: true}, "w2": {}}},
			check: func(t *testing.T, d Decision) {
				if d.State != nil || d.SyncFrom != "w1" || d.After != 0 {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a copy reserved in a cluster not nominated (yet) is not given the workload": {
			in: Input{Workload: workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved), Clusters: []string{"w1"},
				Remotes: map[string]Remote{"w1": {Workload: reservedCopy()}}},
			check: func(t *testing.T, d Decision) {
				if d.ClusterName != nil || !slices.Equal(d.Nominate, []string{"w1"}) {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"a copy left evicted by an earlier dispatch is not given the workload: it goes, to be made anew": {
			in: Input{Workload: nominated("w1", "w2"), Clusters: []string{"w1", "w2"},
				Remotes: map[string]Remote{"w1": {Workload: func() *kueue.Workload {
					wl := reservedCopy()
					wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted,
						Status: metav1.ConditionTrue, Reason: "ClusterQueueStopped"})
					return wl
				}(), Job: true}, "w2": {Workload: pendingCopy}}},
			check: func(t *testing.T, d Decision) {
				if d.ClusterName != nil || !slices.Equal(d.Delete, []string{"w1"}) || len(d.CreateWorkload) != 0 {
					t.Errorf("decision %+v", d)
				}
			},
		},
		"with no connected cluster the check says so": {
			in: Input{Workload: workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved), Remotes: map[string]Remote{}},
			check: func(t *testing.T, d Decision) {
				if d.State == nil || d.State.Message != "No worker cluster is connected" || len(d.CreateWorkload) > 0 {
					t.Errorf("decision %+v", d)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.in.Check = "mk"
			if tc.in.Now.IsZero() {
				tc.in.Now = now
			}
			tc.check(t, Decide(tc.in))
		})
	}
}

func TestCheckActivity(t *testing.T) {
	ac := &kueue.AdmissionCheck{Spec: kueue.AdmissionCheckSpec{ControllerName: ControllerName,
		Parameters: &kueue.AdmissionCheckParametersReference{APIGroup: "kueue.x-k8s.io", Kind: "MultiKueueConfig", Name: "cfg"}}}
	cfg := &kueue.MultiKueueConfig{Spec: kueue.MultiKueueConfigSpec{Clusters: []string{"a", "b"}}}
	for _, tc := range []struct {
		cfg    *kueue.MultiKueueConfig
		active map[string]bool
		want   string
		on     bool
	}{
		{nil, nil, ReasonBadConfig, false},
		{cfg, map[string]bool{}, ReasonNoUsableClusters, false},
		{cfg, map[string]bool{"b": true}, ReasonSomeActiveClusters, true},
		{cfg, map[string]bool{"a": true, "b": true}, ReasonActive, true},
	} {
		if got := CheckActivity(ac, tc.cfg, tc.active); got.Reason != tc.want || got.Active != tc.on {
			t.Errorf("active %v: got %+v, want %s", tc.active, got, tc.want)
		}
	}
	bad := ac.DeepCopy()
	bad.Spec.Parameters.Kind = "ProvisioningRequestConfig"
	if got := CheckActivity(bad, cfg, map[string]bool{"a": true}); got.Reason != ReasonBadConfig || got.Active {
		t.Errorf("wrong parameters kind: %+v", got)
	}
}

// The incremental dispatcher nominates Step clusters more every Round
// since the reservation, in the config's order; an external one leaves
// the nominations to its controller.
func TestDispatchModes(t *testing.T) {
	wl := workload(kueue.CheckStatePending)
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(now.Add(-6 * time.Minute))}}
	clusters := []string{"a", "b", "c", "d", "e"}
	remotes := map[string]Remote{}
	in := Input{Workload: wl, Check: "mk", Clusters: clusters, Remotes: remotes, Now: now,
		Dispatch: Dispatch{Incremental: true, Step: 2, Round: 5 * time.Minute}}
	d := Decide(in)
	if !slices.Equal(d.CreateWorkload, []string{"a", "b", "c", "d"}) || !slices.Equal(d.Nominate, []string{"a", "b", "c", "d"}) || d.After != 4*time.Minute {
		t.Errorf("second round: %+v", d)
	}
	in.Now = now.Add(5 * time.Minute)
	if d := Decide(in); len(d.CreateWorkload) != 5 || d.After != 0 {
		t.Errorf("third round: %+v", d)
	}

	ext := wl.DeepCopy()
	ext.Status.NominatedClusterNames = []string{"c", "x"}
	d = Decide(Input{Workload: ext, Check: "mk", Clusters: clusters, Remotes: remotes, Now: now, Dispatch: Dispatch{External: true}})
	if !slices.Equal(d.CreateWorkload, []string{"c"}) || d.Nominate != nil {
		t.Errorf("external: %+v", d)
	}
	ext.Status.NominatedClusterNames = nil
	d = Decide(Input{Workload: ext, Check: "mk", Clusters: clusters, Remotes: remotes, Now: now, Dispatch: Dispatch{External: true}})
	if len(d.CreateWorkload) != 0 || d.State == nil || d.State.Message != "Waiting for the dispatcher to nominate worker clusters" {
		t.Errorf("external without nominations: %+v", d)
	}
}

func TestIncrementalDispatchAlphabetical(t *testing.T) {
	wl := workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved)
	wl.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now)
	d := Decide(Input{Workload: wl, Check: "mk", Clusters: []string{"z", "b", "a"}, Remotes: map[string]Remote{}, Now: now,
		Dispatch: Dispatch{Incremental: true, Step: 2, Round: 5 * time.Minute, Alphabetical: true}})
	if !slices.Equal(d.Nominate, []string{"a", "b"}) {
		t.Errorf("alphabetical first round: %+v", d)
	}
}

// A manager PodSet whose topology request waits takes the worker's
// assignment once the worker has one.
func TestWorkerTopologyIsCopied(t *testing.T) {
	wl := workload(kueue.CheckStatePending, kueue.WorkloadQuotaReserved)
	wl.Status.NominatedClusterNames = []string{"w1"}
	wl.Status.Admission = &kueue.Admission{PodSetAssignments: []kueue.PodSetAssignment{
		{Name: "main", DelayedTopologyRequest: ptr.To(kueue.DelayedTopologyRequestStatePending)}, {Name: "other"}}}
	ta := &kueue.TopologyAssignment{Levels: []string{"kubernetes.io/hostname"}}
	remote := reservedCopy()
	remote.Status.Admission = &kueue.Admission{PodSetAssignments: []kueue.PodSetAssignment{
		{Name: "main", TopologyAssignment: ta}, {Name: "other", TopologyAssignment: ta}}}
	d := Decide(Input{Workload: wl, Check: "mk", Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {Workload: remote}}, Now: now})
	if len(d.Topology) != 1 || d.Topology["main"] == nil || ptr.Deref(d.ClusterName, "") != "w1" {
		t.Errorf("decision %+v", d)
	}
	remote.Status.Admission = nil
	if d := Decide(Input{Workload: wl, Check: "mk", Clusters: []string{"w1"}, Remotes: map[string]Remote{"w1": {Workload: remote}}, Now: now}); d.Topology != nil {
		t.Errorf("copied from a worker without an assignment: %+v", d.Topology)
	}
}
