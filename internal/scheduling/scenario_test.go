package scheduling

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// scenario is one file of testdata/scenarios: a cluster state, pending
// workloads and the decision expected for every one of them. Specs use the
// kueue.x-k8s.io/v1beta2 field names.
type scenario struct {
	Description   string                              `json:"description"`
	Options       scenarioOptions                     `json:"options"`
	Flavors       map[string]kueue.ResourceFlavorSpec `json:"flavors"`
	Cohorts       map[string]kueue.CohortSpec         `json:"cohorts"`
	ClusterQueues map[string]kueue.ClusterQueueSpec   `json:"clusterQueues"`
	Namespaces    map[string]map[string]string        `json:"namespaces"`
	Admitted      []scenarioAdmitted                  `json:"admitted"`
	Pending       []scenarioWorkload                  `json:"pending"`
	Expect        map[string]scenarioExpect           `json:"expect"`
}

type scenarioOptions struct {
	IgnoreUndeclared bool `json:"ignoreUndeclared"`
	// FairSharing lists the fair-sharing preemption strategies; when set
	// (even empty), fair sharing is on.
	FairSharing *[]preemption.Strategy `json:"fairSharing"`
	// Patience (Options.Patience) in seconds, and Now, the snapshot's time
	// in seconds.
	Patience int64 `json:"patience"`
	Now      int64 `json:"now"`
	// EvictionDelay is the snapshot's EvictionDelay in seconds.
	EvictionDelay int64 `json:"evictionDelay"`
}

// scenarioAdmitted is a workload already holding quota: usage maps flavor to
// resource amounts.
type scenarioAdmitted struct {
	Name         string                                  `json:"name"`
	Namespace    string                                  `json:"namespace"`
	ClusterQueue string                                  `json:"clusterQueue"`
	Priority     int32                                   `json:"priority"`
	Usage        map[string]map[string]resource.Quantity `json:"usage"`
	// Time is the queue-order time and ReservedAt when quota was reserved,
	// in seconds; Evicting marks a workload already being evicted.
	Time       int64 `json:"time"`
	ReservedAt int64 `json:"reservedAt"`
	Evicting   bool  `json:"evicting"`
	// ExpectedEnd is when the workload is expected to end, in seconds (0:
	// unknown).
	ExpectedEnd int64 `json:"expectedEnd"`
	// EstimateBorrowed marks an expected end borrowed from other
	// LocalQueues of the cohort tree.
	EstimateBorrowed bool `json:"estimateBorrowed"`
}

type scenarioWorkload struct {
	Name         string `json:"name"`
	Namespace    string `json:"namespace"`
	ClusterQueue string `json:"clusterQueue"`
	Priority     int32  `json:"priority"`
	Time         int64  `json:"time"` // queue-order time, seconds
	// Preempting marks a workload that already evicted others and waits
	// for them to leave (workload.Info.Preempting).
	Preempting bool `json:"preempting"`
	// EarlierVictims, for a preempting workload, are the admitted
	// workloads (names) it chose in an earlier cycle, as victim name ->
	// reason (its hint's victims).
	EarlierVictims map[string]string `json:"earlierVictims"`
	PodSets        []scenarioPodSet  `json:"podSets"`
	// Replaces, for a slice of an elastic job that grows, is the admitted
	// workload it replaces (workload.Info.Replaces): the pod sets' counts
	// are then the pods it adds.
	Replaces *scenarioReplaces `json:"replaces"`
}

// scenarioReplaces names the replaced workload, the slice's whole counts
// per PodSet and the replaced workload's flavors (PodSet -> resource ->
// flavor).
type scenarioReplaces struct {
	Name    string                       `json:"name"`
	Counts  map[string]int32             `json:"counts"`
	Flavors map[string]map[string]string `json:"flavors"`
}

type scenarioPodSet struct {
	Name         string               `json:"name"`
	Count        *int32               `json:"count"`
	MinCount     int32                `json:"minCount"`
	Requests     corev1.ResourceList  `json:"requests"`
	NodeSelector map[string]string    `json:"nodeSelector"`
	Affinity     *corev1.NodeSelector `json:"affinity"`
	Tolerations  []corev1.Toleration  `json:"tolerations"`
}

// scenarioExpect is the expected decision. With admit, flavors (PodSet ->
// resource -> flavor), counts and borrowingLevel are checked when given;
// otherwise reason is required and message, when given, must be contained.
type scenarioExpect struct {
	Admit          bool                         `json:"admit"`
	Flavors        map[string]map[string]string `json:"flavors"`
	Counts         map[string]int32             `json:"counts"`
	BorrowingLevel *int                         `json:"borrowingLevel"`
	Reason         Reason                       `json:"reason"`
	Message        string                       `json:"message"`
	// Victims maps each workload the decision preempts to the Preempted
	// condition reason; required with reason WaitingForPreemptedWorkloads.
	Victims map[string]string `json:"victims"`
	// Parking, when set, is what the refusal sets aside in a
	// BestEffortFIFO queue: nothing, shape or workload.
	Parking string `json:"parking"`
	// Recheck, when set, is Decision.Recheck in whole seconds (0: none).
	Recheck *int64 `json:"recheck"`
}

func loadScenario(t *testing.T, path string) *scenario {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenario
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &sc
}

// build turns the scenario into a snapshot and queues.
func (sc *scenario) build(t *testing.T) (*state.Snapshot, []workload.Queue, Options) {
	t.Helper()
	st := state.New()
	for name, spec := range sc.Flavors {
		st.SetFlavor(state.NewFlavor(&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}))
	}
	for name, spec := range sc.Cohorts {
		c, err := state.NewCohort(&kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		st.SetCohort(c)
	}
	for name, spec := range sc.ClusterQueues {
		if spec.NamespaceSelector == nil {
			spec.NamespaceSelector = &metav1.LabelSelector{}
		}
		cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		st.SetClusterQueue(cq)
	}
	st.SetNamespace("default", map[string]string{corev1.LabelMetadataName: "default"})
	for name, l := range sc.Namespaces {
		st.SetNamespace(name, l)
	}
	for _, a := range sc.Admitted {
		usage := resources.FlavorResourceQuantities{}
		for f, rs := range a.Usage {
			for r, q := range rs {
				a, err := resources.FromQuantity(corev1.ResourceName(r), q)
				if err != nil {
					t.Fatal(err)
				}
				usage[resources.FlavorResource{Flavor: kueue.ResourceFlavorReference(f), Resource: corev1.ResourceName(r)}] = a
			}
		}
		if err := st.Assume(&state.Admitted{Key: key(a.Namespace, a.Name), UID: types.UID(a.Name), ClusterQueue: kueue.ClusterQueueReference(a.ClusterQueue),
			Priority: a.Priority, Usage: usage, QueueOrderTime: a.Time * int64(time.Second), ReservedAt: a.ReservedAt * int64(time.Second),
			Evicting: a.Evicting, ExpectedEnd: a.ExpectedEnd * int64(time.Second), EstimateBorrowed: a.EstimateBorrowed}); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Flavors: flavors.Options{IgnoreUndeclared: sc.Options.IgnoreUndeclared},
		Patience: time.Duration(sc.Options.Patience) * time.Second}
	if fs := sc.Options.FairSharing; fs != nil {
		opts.FairSharing = &FairSharing{Strategies: *fs}
	}
	snap := st.Snapshot()
	snap.Now = sc.Options.Now * int64(time.Second)
	snap.EvictionDelay = time.Duration(sc.Options.EvictionDelay) * time.Second
	return snap, sc.queues(), opts
}

func key(ns, name string) types.NamespacedName {
	if ns == "" {
		ns = "default"
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}

func (sc *scenario) queues() []workload.Queue {
	byCQ := map[string][]*workload.Info{}
	shapes := workload.NewShapes()
	for _, w := range sc.Pending {
		var podSets []workload.PodSetShape
		for _, ps := range w.PodSets {
			count := int32(1)
			if ps.Count != nil {
				count = *ps.Count
			}
			name := ps.Name
			if name == "" {
				name = "main"
			}
			perPod, err := resources.FromResourceList(ps.Requests)
			if err != nil {
				panic(err)
			}
			perPod[corev1.ResourcePods] = resources.Unit(corev1.ResourcePods)
			podSets = append(podSets, workload.PodSetShape{Name: kueue.PodSetReference(name), Count: count, MinCount: ps.MinCount,
				PerPod: perPod, NodeSelector: ps.NodeSelector, RequiredAffinity: ps.Affinity, Tolerations: ps.Tolerations})
		}
		info := &workload.Info{Key: key(w.Namespace, w.Name), UID: types.UID(w.Name), ClusterQueue: kueue.ClusterQueueReference(w.ClusterQueue),
			Priority: w.Priority, QueueOrderTime: w.Time * int64(time.Second), Preempting: w.Preempting,
			Shape: shapes.Intern(workload.NewShape(podSets))}
		if len(w.EarlierVictims) > 0 {
			info.Hint = &workload.Hint{}
			for _, name := range slices.Sorted(maps.Keys(w.EarlierVictims)) {
				a := sc.admittedNamed(name)
				info.Hint.Victims = append(info.Hint.Victims, workload.Victim{Key: key(a.Namespace, a.Name), UID: types.UID(a.Name),
					ClusterQueue: kueue.ClusterQueueReference(a.ClusterQueue), Reason: w.EarlierVictims[name]})
			}
		}
		if r := w.Replaces; r != nil {
			info.Replaces = &workload.Replacement{Key: key(w.Namespace, r.Name), UID: types.UID(r.Name)}
			for _, ps := range info.Shape.PodSets {
				info.Replaces.Counts = append(info.Replaces.Counts, r.Counts[string(ps.Name)])
				pins := map[corev1.ResourceName]kueue.ResourceFlavorReference{}
				for res, f := range r.Flavors[string(ps.Name)] {
					pins[corev1.ResourceName(res)] = kueue.ResourceFlavorReference(f)
				}
				info.Replaces.Flavors = append(info.Replaces.Flavors, pins)
			}
		}
		byCQ[w.ClusterQueue] = append(byCQ[w.ClusterQueue], info)
	}
	var out []workload.Queue
	for cq, ws := range byCQ {
		slices.SortFunc(ws, workload.Compare)
		out = append(out, workload.Queue{ClusterQueue: kueue.ClusterQueueReference(cq), Workloads: ws})
	}
	return out
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files found (err=%v)", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			sc := loadScenario(t, path)
			snap, queues, opts := sc.build(t)
			result := Decide(snap, queues, opts)
			checkScenario(t, sc, result)
			// Determinism: the same input gives the same decisions.
			again := Decide(snap, queues, opts)
			if got, want := describe(again), describe(result); got != want {
				t.Errorf("a second run decided differently:\n%s\nvs\n%s", got, want)
			}
			if got, want := describe(Decide(snap, withNamespaces(queues), opts)), describe(result); got != want {
				t.Errorf("with namespaces listed:\n%s\nvs\n%s", got, want)
			}
		})
	}
}

func checkScenario(t *testing.T, sc *scenario, result Result) {
	t.Helper()
	all := result.AllDecisions()
	if len(all) != len(sc.Pending) {
		t.Fatalf("%d decisions for %d pending workloads", len(all), len(sc.Pending))
	}
	seen := map[string]bool{}
	for _, d := range all {
		name := d.Workload.Key.Name
		seen[name] = true
		want, ok := sc.Expect[name]
		if !ok {
			t.Errorf("no expectation for %s (decided: %s)", name, describeOne(d))
			continue
		}
		checkDecision(t, name, want, d)
	}
	for name := range sc.Expect {
		if !seen[name] {
			t.Errorf("expectation for %s, which is not pending", name)
		}
	}
}

func checkDecision(t *testing.T, name string, want scenarioExpect, d Decision) {
	t.Helper()
	if want.Admit != d.Admit {
		t.Errorf("%s: admit = %v, want %v (%s)", name, d.Admit, want.Admit, describeOne(d))
		return
	}
	if !want.Admit {
		if want.Reason == "" {
			t.Errorf("%s: expectation needs a reason", name)
		}
		if d.Reason != want.Reason {
			t.Errorf("%s: reason = %s, want %s (%s)", name, d.Reason, want.Reason, d.Explain())
		}
		if want.Message != "" && !strings.Contains(d.Explain(), want.Message) {
			t.Errorf("%s: message %q does not contain %q", name, d.Explain(), want.Message)
		}
		checkVictims(t, name, want.Victims, d.Victims)
		if want.Recheck != nil && d.Recheck/int64(time.Second) != *want.Recheck {
			t.Errorf("%s: recheck at %v s, want %d s (%s)", name, float64(d.Recheck)/float64(time.Second), *want.Recheck, d.Explain())
		}
		if want.Parking != "" {
			got := [...]string{ParkNothing: "nothing", ParkWorkload: "workload", ParkShape: "shape"}[d.Parking(kueue.BestEffortFIFO)]
			if got != want.Parking {
				t.Errorf("%s: parking = %s, want %s (%s)", name, got, want.Parking, d.Explain())
			}
		}
		return
	}
	asg := d.Assignment
	for ps, rs := range want.Flavors {
		psa := findPodSet(asg, ps)
		if psa == nil {
			t.Errorf("%s: no assignment for pod set %s", name, ps)
			continue
		}
		for r, f := range rs {
			if got := psa.Flavors[corev1.ResourceName(r)]; string(got) != f {
				t.Errorf("%s: %s/%s flavor = %q, want %q", name, ps, r, got, f)
			}
		}
	}
	for ps, n := range want.Counts {
		if psa := findPodSet(asg, ps); psa == nil || psa.Count != n {
			t.Errorf("%s: %s count = %v, want %d", name, ps, psa, n)
		}
	}
	if want.BorrowingLevel != nil && asg.BorrowingLevel != *want.BorrowingLevel {
		t.Errorf("%s: borrowing level = %d, want %d", name, asg.BorrowingLevel, *want.BorrowingLevel)
	}
}

func findPodSet(asg *flavors.Assignment, name string) *flavors.PodSetAssignment {
	for i := range asg.PodSets {
		if string(asg.PodSets[i].Name) == name {
			return &asg.PodSets[i]
		}
	}
	return nil
}

func describe(r Result) string {
	var b strings.Builder
	for _, d := range r.AllDecisions() {
		b.WriteString(describeOne(d) + "\n")
	}
	return b.String()
}

func describeOne(d Decision) string {
	if !d.Admit {
		var victims []string
		for _, v := range d.Victims {
			victims = append(victims, v.Workload.Key.Name+"("+v.Reason+")")
		}
		if len(victims) > 0 {
			return fmt.Sprintf("%s: preempting %s", d.Workload.Key.Name, strings.Join(victims, " "))
		}
		return fmt.Sprintf("%s: %s: %s", d.Workload.Key.Name, d.Reason, d.Explain())
	}
	var parts []string
	for _, ps := range d.Assignment.PodSets {
		var fl []string
		for _, r := range slices.Sorted(maps.Keys(ps.Flavors)) {
			fl = append(fl, fmt.Sprintf("%s=%s", r, ps.Flavors[r]))
		}
		parts = append(parts, fmt.Sprintf("%s x%d [%s]", ps.Name, ps.Count, strings.Join(fl, " ")))
	}
	return fmt.Sprintf("%s: admitted (level %d) %s", d.Workload.Key.Name, d.Assignment.BorrowingLevel, strings.Join(parts, ", "))
}

func checkVictims(t *testing.T, name string, want map[string]string, got []preemption.Target) {
	t.Helper()
	gotMap := map[string]string{}
	for _, v := range got {
		gotMap[v.Workload.Key.Name] = v.Reason
	}
	if !maps.Equal(gotMap, want) && (len(gotMap) > 0 || len(want) > 0) {
		t.Errorf("%s: victims = %v, want %v", name, gotMap, want)
	}
}

// admittedNamed returns the scenario's admitted workload of that name.
func (sc *scenario) admittedNamed(name string) scenarioAdmitted {
	for _, a := range sc.Admitted {
		if a.Name == name {
			return a
		}
	}
	panic(fmt.Sprintf("scenario: no admitted workload %q", name))
}
