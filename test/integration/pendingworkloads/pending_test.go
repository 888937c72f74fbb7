package pendingworkloads

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// The positions the API reports are the order the scheduler admits in,
// under both queueing strategies: priority first, then creation time; the
// LocalQueue view keeps the ClusterQueue positions and counts its own.
// Under BestEffortFIFO a workload that cannot fit is listed (at its place,
// as Kueue lists inadmissible workloads) and skipped by the scheduler;
// under StrictFIFO the head is admitted first.
func TestPositionsFollowTheSchedulersOrder(t *testing.T) {
	ensureFlavor(t)
	for _, strategy := range []kueue.QueueingStrategy{kueue.StrictFIFO, kueue.BestEffortFIFO} {
		t.Run(string(strategy), func(t *testing.T) {
			ns := namespace(t)
			cq := "cq-" + strings.ToLower(string(strategy))
			create(t, clusterQueue(cq, "1", strategy), localQueue(ns, "a", cq), localQueue(ns, "b", cq))
			// The quota is taken, so everything created next waits.
			create(t, workload(ns, "running", "a", "1", 0))
			waitAdmitted(t, ns, "running")
			var huge []item
			if strategy == kueue.BestEffortFIFO {
				create(t, workload(ns, "huge", "a", "2", 20)) // never fits
				huge = []item{{"huge", "a", 20, 0, 0}}
			}
			create(t, workload(ns, "low", "a", "1", 1), workload(ns, "high", "b", "1", 10), workload(ns, "mid-first", "a", "1", 5))
			time.Sleep(1100 * time.Millisecond) // creation times have a resolution of a second
			create(t, workload(ns, "mid-second", "b", "1", 5))

			n := int32(len(huge))
			want := append(huge, item{"high", "b", 10, n, 0}, item{"mid-first", "a", 5, n + 1, n},
				item{"mid-second", "b", 5, n + 2, 1}, item{"low", "a", 1, n + 3, n + 1})
			waitPending(t, cqPath("v1beta2", cq, ""), want)
			// limit and offset page the ClusterQueue's list...
			waitPending(t, cqPath("v1beta2", cq, fmt.Sprintf("?offset=%d&limit=2", n+1)), want[n+1:n+3])
			// ...and a LocalQueue's, which shows its own workloads only.
			var inA []item
			for _, w := range want {
				if w.LocalQueue == "a" {
					inA = append(inA, w)
				}
			}
			waitPending(t, lqPath("v1beta2", ns, "a", ""), inA)
			waitPending(t, lqPath("v1beta2", ns, "a", "?offset=1&limit=1"), inA[1:2])
			waitPending(t, lqPath("v1beta2", ns, "b", ""), []item{want[n], want[n+2]})

			// The scheduler admits the first workload that fits in the
			// listed order; the rest move up.
			finish(t, ns, "running")
			waitAdmitted(t, ns, "high")
			after := append(huge, item{"mid-first", "a", 5, n, n}, item{"mid-second", "b", 5, n + 1, 0}, item{"low", "a", 1, n + 2, n + 1})
			waitPending(t, cqPath("v1beta2", cq, ""), after)
			for _, w := range after {
				if wl := getWorkload(t, ns, w.Name); wl.Status.Admission != nil {
					t.Errorf("%s was admitted; only high should have been", w.Name)
				}
			}
		})
	}
}

// The response has Kueue's shape: kind PendingWorkloadsSummary in the
// requested version, each item with the workload's metadata; v1beta1
// serves the same; unknown queues are 404.
func TestResponseShapeAndVersions(t *testing.T) {
	ensureFlavor(t)
	ns := namespace(t)
	create(t, clusterQueue("cq-shape", "0", kueue.BestEffortFIFO), localQueue(ns, "lq", "cq-shape"), workload(ns, "w", "lq", "1", 3))
	want := []item{{"w", "lq", 3, 0, 0}}
	waitPending(t, cqPath("v1beta2", "cq-shape", ""), want)
	waitPending(t, cqPath("v1beta1", "cq-shape", ""), want)
	_, body := get(t, env.Config, cqPath("v1beta1", "cq-shape", ""))
	var raw struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Items      []map[string]json.RawMessage
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Kind != "PendingWorkloadsSummary" || raw.APIVersion != "visibility.kueue.x-k8s.io/v1beta1" || len(raw.Items) != 1 {
		t.Fatalf("response %s", body)
	}
	for _, field := range []string{"metadata", "priority", "localQueueName", "positionInClusterQueue", "positionInLocalQueue"} {
		if _, ok := raw.Items[0][field]; !ok {
			t.Errorf("item lacks %q: %s", field, body)
		}
	}
	_, s := pending(t, cqPath("v1beta2", "cq-shape", ""))
	if m := s.Items[0].ObjectMeta; m.Namespace != ns || m.CreationTimestamp.IsZero() {
		t.Errorf("metadata %+v, want the workload's namespace and creation time", m)
	}
	for _, path := range []string{cqPath("v1beta2", "nope", ""), lqPath("v1beta2", ns, "nope", "")} {
		if code, body := get(t, env.Config, path); code != http.StatusNotFound {
			t.Errorf("GET %s = %d %s, want 404", path, code, body)
		}
	}
	if code, body := get(t, env.Config, cqPath("v1beta2", "cq-shape", "?limit=x")); code != http.StatusBadRequest {
		t.Errorf("a limit that is not a number = %d %s, want 400", code, body)
	}
}
