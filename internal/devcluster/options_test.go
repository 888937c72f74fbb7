package devcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func noEnv(string) string { return "" }

func TestDefaultOptionsInsideRepo(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"), "// comment\nmodule github.com/kuota-dev/kuota\n\ngo 1.26.0\n")
	sub := filepath.Join(root, "internal", "x")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(sub, "/home/u/.cache", noEnv)
	if want := filepath.Join(root, ".cache", "kwok"); o.WorkDir != want {
		t.Errorf("WorkDir = %q, want %q", o.WorkDir, want)
	}
	if want := filepath.Join(root, ".cache", "bin"); o.ToolsBin != want {
		t.Errorf("ToolsBin = %q, want %q", o.ToolsBin, want)
	}
	if o.Name != "kuota" || o.Port != 6443 || o.Nodes != 4 || o.PodsPerNode != 110 || o.NodeGPUs != 0 {
		t.Errorf("unexpected defaults %+v", o)
	}
	if o.NodeCPU.String() != "32" || o.NodeMemory.String() != "256Gi" {
		t.Errorf("capacity defaults = %s cpu, %s memory", o.NodeCPU.String(), o.NodeMemory.String())
	}
	if err := o.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestDefaultOptionsOutsideRepoAndEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/other\n")
	env := func(k string) string {
		if k == ToolsBinEnv {
			return "/opt/kuota-tools"
		}
		return ""
	}
	o := DefaultOptions(dir, "/home/u/.cache", env)
	if want := filepath.Join("/home/u/.cache", "kuota", "kwok"); o.WorkDir != want {
		t.Errorf("WorkDir = %q, want %q", o.WorkDir, want)
	}
	if o.ToolsBin != "/opt/kuota-tools" {
		t.Errorf("ToolsBin = %q, want the %s value", o.ToolsBin, ToolsBinEnv)
	}
}

func TestKubeconfigPath(t *testing.T) {
	o := Options{Name: "c1", WorkDir: "/w"}
	if got, want := o.KubeconfigPath(), "/w/clusters/c1/kubeconfig.yaml"; got != want {
		t.Errorf("KubeconfigPath() = %q, want %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr []string
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{name: "port zero picks one", mutate: func(o *Options) { o.Port = 0 }},
		{name: "no default group", mutate: func(o *Options) { o.Nodes = 0 }},
		{name: "bad name", mutate: func(o *Options) { o.Name = "My_Cluster" }, wantErr: []string{`invalid cluster name "My_Cluster"`}},
		{name: "bad port", mutate: func(o *Options) { o.Port = 70000 }, wantErr: []string{"invalid port 70000"}},
		{name: "negative nodes", mutate: func(o *Options) { o.Nodes = -1 }, wantErr: []string{"invalid node count -1"}},
		{
			name: "bad capacity",
			mutate: func(o *Options) {
				o.NodeCPU = resource.MustParse("0")
				o.NodeMemory = resource.MustParse("-1Gi")
				o.NodeGPUs = -2
				o.PodsPerNode = 0
			},
			wantErr: []string{`invalid node cpu "0"`, `invalid node memory "-1Gi"`, "invalid node gpu count -2", "invalid pods per node 0"},
		},
		{name: "bad label", mutate: func(o *Options) { o.NodeLabels = map[string]string{"a": "b c"} }, wantErr: []string{`invalid node labels: invalid value "b c" for label "a"`}},
		{
			name:    "group clashes with default group",
			mutate:  func(o *Options) { o.NodeGroups = []NodeGroup{{Name: "worker", Count: 1}} },
			wantErr: []string{`node group "worker" is defined twice`},
		},
		{
			name:   "worker group allowed without default group",
			mutate: func(o *Options) { o.Nodes = 0; o.NodeGroups = []NodeGroup{{Name: "worker", Count: 1}} },
		},
		{
			name:    "duplicate groups",
			mutate:  func(o *Options) { o.NodeGroups = []NodeGroup{{Name: "g", Count: 1}, {Name: "g", Count: 2}} },
			wantErr: []string{`node group "g" is defined twice`},
		},
		{
			name:    "group count",
			mutate:  func(o *Options) { o.NodeGroups = []NodeGroup{{Name: "g", Count: 0}} },
			wantErr: []string{`node group "g": invalid count 0`},
		},
		{
			name: "group resource",
			mutate: func(o *Options) {
				o.NodeGroups = []NodeGroup{{Name: "g", Count: 1, Resources: corev1.ResourceList{"cpu": resource.MustParse("-1")}}}
			},
			wantErr: []string{`node group "g": invalid quantity "-1" for resource "cpu"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
			tc.mutate(&o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
