package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/sim"
)

// Files of the replay: the run's queues and its workloads as they were
// really created, for `kuota simulate --queues replay-queues.yaml --trace
// replay.trace` (bench/README.md, "Replaying a run").
const (
	ReplayQueuesFile = "replay-queues.yaml"
	ReplayTraceFile  = "replay.trace"
)

// writeReplay writes the run's queue objects and a trace of its workloads
// with the times their creations were sent (a loaded API server makes them
// late against the schedule), so that the simulator can replay the load
// the manager really saw. Workloads never created are left out.
func writeReplay(dir string, sc *plan, events []driver.Event) error {
	setup, trace := sim.FromScenario(sc.plan, driver.DefaultFlavor)
	created := map[string]time.Time{}
	var first time.Time
	for _, e := range events {
		if e.Kind != "created" {
			continue
		}
		created[e.Namespace+"/"+e.Name] = e.At
		if first.IsZero() || e.At.Before(first) {
			first = e.At
		}
	}
	replay := make([]sim.Workload, 0, len(trace))
	for _, w := range trace {
		at, ok := created[w.Namespace+"/"+w.Name]
		if !ok {
			continue
		}
		w.Arrive = at.Sub(first)
		replay = append(replay, w)
	}
	var queues bytes.Buffer
	objs := []runtime.Object{}
	for _, f := range setup.Flavors {
		objs = append(objs, f)
	}
	for _, c := range setup.Cohorts {
		objs = append(objs, c)
	}
	for i := range setup.ClusterQueues {
		objs = append(objs, setup.ClusterQueues[i], setup.LocalQueues[i])
	}
	for _, o := range objs {
		gvks, _, err := kueueScheme.ObjectKinds(o)
		if err != nil {
			return fmt.Errorf("writing the replay's queues: %w", err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
		data, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("writing the replay's queues: %w", err)
		}
		queues.WriteString("---\n")
		queues.Write(data)
	}
	if err := os.WriteFile(filepath.Join(dir, ReplayQueuesFile), queues.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", ReplayQueuesFile, err)
	}
	var out bytes.Buffer
	if err := sim.WriteTrace(&out, replay); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReplayTraceFile), out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", ReplayTraceFile, err)
	}
	return nil
}

// kueueScheme names the kinds of the replay's objects.
var kueueScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := kueue.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()
