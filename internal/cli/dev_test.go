package cli

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kuota-dev/kuota/internal/devcluster"
)

func TestCommandName(t *testing.T) {
	tests := map[string]string{
		"/usr/local/bin/kuota":         "kuota",
		"kuota":                        "kuota",
		"/home/u/bin/kubectl-kuota":    "kubectl kuota",
		"kubectl-kuota.exe":            "kubectl kuota",
		"./kubectl-":                   "kubectl-",
		"/tmp/go-build123/b001/exe/kq": "kq",
		"":                             "kuota",
	}
	for argv0, want := range tests {
		if got := CommandName(argv0); got != want {
			t.Errorf("CommandName(%q) = %q, want %q", argv0, got, want)
		}
	}
}

func testEnv(t *testing.T) (Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errOut bytes.Buffer
	dir := t.TempDir()
	return Env{
		Out: &out, Err: &errOut, WorkingDir: dir, UserCacheDir: filepath.Join(dir, "cache"),
		Getenv: func(string) string { return "" },
	}, &out, &errOut
}

func execute(t *testing.T, env Env, args ...string) error {
	t.Helper()
	root := NewRootCommand("kuota", env)
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}

func TestUpFlagErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "label without value", args: []string{"--node-labels", "tier"}, wantErr: `--node-labels: invalid label "tier": want key=value`},
		{name: "bad label key", args: []string{"--node-labels", "a=b,bad key=c"}, wantErr: `--node-labels: invalid label key "bad key"`},
		{name: "bad cpu", args: []string{"--node-cpu", "lots"}, wantErr: `--node-cpu "lots": not a quantity`},
		{name: "bad memory", args: []string{"--node-memory", "1GB"}, wantErr: `--node-memory "1GB": not a quantity`},
		{name: "zero cpu", args: []string{"--node-cpu", "0"}, wantErr: `invalid node cpu "0"`},
		{name: "bad group", args: []string{"--node-group", "gpu"}, wantErr: `--node-group: invalid node group "gpu"`},
		{name: "clashing group", args: []string{"--node-group", "worker:1"}, wantErr: `node group "worker" is defined twice`},
		{name: "bad port", args: []string{"--port", "-3"}, wantErr: "invalid port -3"},
		{name: "bad name", args: []string{"--name", "A"}, wantErr: `invalid cluster name "A"`},
		{name: "bad timeout", args: []string{"--timeout", "0s"}, wantErr: "--timeout must be positive"},
		{name: "not an int", args: []string{"--nodes", "many"}, wantErr: `invalid argument "many" for "--nodes"`},
		{name: "extra argument", args: []string{"now"}, wantErr: `unknown command "now"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _ := testEnv(t)
			err := execute(t, env, append([]string{"dev", "up"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("dev up %q = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

func TestUpFlagsToOptions(t *testing.T) {
	d := devcluster.DefaultOptions(t.TempDir(), t.TempDir(), func(string) string { return "" })
	f := upFlags{
		clusterFlags: clusterFlags{name: "c2", workDir: "/w", toolsBin: "/b"},
		port:         0, nodes: 3, nodeCPU: "8", nodeMemory: "64Gi", nodeGPUs: 2, podsPerNode: 50,
		nodeLabels: []string{"zone=a", "tier=x"},
		nodeGroups: []string{"big:1:tier=big:cpu=128"},
		timeout:    defaultUpTimeout,
	}
	o, err := f.options(d)
	if err != nil {
		t.Fatalf("options() = %v", err)
	}
	if o.Name != "c2" || o.WorkDir != "/w" || o.ToolsBin != "/b" || o.Port != 0 || o.Nodes != 3 ||
		o.NodeGPUs != 2 || o.PodsPerNode != 50 || o.NodeCPU.String() != "8" || o.NodeMemory.String() != "64Gi" {
		t.Errorf("options() = %+v", o)
	}
	if want := map[string]string{"zone": "a", "tier": "x"}; !maps.Equal(o.NodeLabels, want) {
		t.Errorf("labels = %v, want %v", o.NodeLabels, want)
	}
	if len(o.NodeGroups) != 1 || o.NodeGroups[0].Name != "big" || o.NodeGroups[0].Labels["tier"] != "big" {
		t.Errorf("groups = %+v", o.NodeGroups)
	}
}

func TestUpMissingBinaries(t *testing.T) {
	env, _, _ := testEnv(t)
	bin := t.TempDir()
	err := execute(t, env, "dev", "up", "--tools-bin", bin, "--workdir", t.TempDir(), "--port", "0")
	if err == nil || !strings.Contains(err.Error(), "missing binaries in "+bin+": kwokctl, kwok,") ||
		!strings.Contains(err.Error(), "make tools") {
		t.Errorf("dev up without binaries = %v, want an error naming kwokctl and make tools", err)
	}
}

func TestDownWithoutCluster(t *testing.T) {
	env, out, _ := testEnv(t)
	wd := t.TempDir()
	if err := execute(t, env, "dev", "down", "--name", "nothing", "--workdir", wd); err != nil {
		t.Fatalf("dev down = %v", err)
	}
	if want := `Cluster "nothing" does not exist in ` + wd; !strings.Contains(out.String(), want) {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestHelpUsesProgramName(t *testing.T) {
	env, out, _ := testEnv(t)
	root := NewRootCommand("kubectl kuota", env)
	root.SetArgs([]string{"dev", "up", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl kuota dev up [flags]", "kubectl kuota dev up --nodes 8", "--node-group", "(default 6443)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help does not contain %q:\n%s", want, out.String())
		}
	}
}
