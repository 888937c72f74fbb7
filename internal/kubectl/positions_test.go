package kubectl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// visibilityServer serves the pending workloads of ClusterQueue "team-a",
// answers 404 for "gone", 503 for "down" and 500 for "broken".
func visibilityServer(t *testing.T) rest.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case visibilityPath + "/team-a/pendingworkloads":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"PendingWorkloadsSummary","apiVersion":"visibility.kueue.x-k8s.io/v1beta2","items":[
				{"metadata":{"name":"wl-1","namespace":"ns1"},"positionInClusterQueue":0,"positionInLocalQueue":0,"priority":5,"localQueueName":"lq"},
				{"metadata":{"name":"wl-2","namespace":"ns2"},"positionInClusterQueue":1,"positionInLocalQueue":0},
				{"metadata":{"name":"wl-3","namespace":"ns1"},"positionInClusterQueue":2,"positionInLocalQueue":1}]}`))
		case visibilityPath + "/down/pendingworkloads":
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		case visibilityPath + "/broken/pendingworkloads":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs.Discovery().RESTClient()
}

func TestFetchPositionsTakesLocalQueuePositions(t *testing.T) {
	rc := visibilityServer(t)
	got, err := fetchPositions(context.Background(), rc, []string{"team-a", "gone", "down"})
	if err != nil {
		t.Fatalf("a ClusterQueue the API does not serve must not fail the listing: %v", err)
	}
	for _, c := range []struct{ ns, name, want string }{
		{"ns1", "wl-1", "0"}, {"ns2", "wl-2", "0"}, {"ns1", "wl-3", "1"},
		{"ns2", "wl-1", ""}, // same name, other namespace: not pending there
		{"ns1", "wl-9", ""},
	} {
		if cell := got.cell(c.ns, c.name); cell != c.want {
			t.Errorf("position of %s/%s = %q, want %q", c.ns, c.name, cell, c.want)
		}
	}
}

func TestFetchPositionsReportsServerErrors(t *testing.T) {
	_, err := fetchPositions(context.Background(), visibilityServer(t), []string{"broken"})
	if err == nil || !strings.Contains(err.Error(), "ClusterQueue broken") {
		t.Fatalf("error %v, want one naming ClusterQueue broken", err)
	}
}
