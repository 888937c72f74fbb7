package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/demo"
	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/paths"
)

// TestDemoRunsToTheEnd runs `kuota demo` as `make demo` does, on its own
// cluster, with a shorter stream: every Job finishes, the summary is
// printed and everything is cleaned up.
func TestDemoRunsToTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes about half a minute")
	}
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := paths.ToolsBin()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tmp := t.TempDir()
	o := demo.Options{
		Cluster: devcluster.Options{Name: fmt.Sprintf("demo-e2e-%d", os.Getpid()), WorkDir: filepath.Join(tmp, "kwok"),
			ToolsBin: bin, Port: freePort(), PodsPerNode: 110, DisableQPSLimits: true},
		Root:       root,
		ManagerBin: filepath.Join(suite.tmp, "kuota-manager"),
		StateDir:   filepath.Join(tmp, "state"),
		Stream:     demo.StreamOptions{Seed: 3, Jobs: 10, Window: 10 * time.Second},
		Drain:      2 * time.Minute,
		Out:        &out,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	err = demo.Run(ctx, o)
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatalf("demo failed: %v", err)
	}
	for _, want := range []string{"10 submitted, 10 finished", "Cleaned up: Jobs deleted, manager stopped, cluster deleted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Cluster.WorkDir, "clusters", o.Cluster.Name)); !os.IsNotExist(err) {
		t.Errorf("the demo's cluster folder is still there after the run (stat: %v)", err)
	}
}
