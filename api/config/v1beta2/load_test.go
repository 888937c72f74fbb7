package v1beta2

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const header = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"

func TestLoadFullFileRoundTrips(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		t.Fatalf("Load() error: %v", err)
	}
	checks := map[string]bool{
		"namespace":             ptr.Deref(cfg.Namespace, "") == "kuota-system",
		"webhook.port":          ptr.Deref(cfg.Webhook.Port, 0) == 9444,
		"leaderElection":        cfg.LeaderElection.LeaseDuration.Duration == 30*time.Second,
		"metrics.customLabels":  len(cfg.Metrics.CustomLabels) == 3,
		"controller.cacheSync":  cfg.Controller.CacheSyncTimeout.Duration == 5*time.Minute,
		"tls.curvePreferences":  len(cfg.TLS.CurvePreferences) == 2,
		"integrations":          len(cfg.Integrations.Frameworks) == 18,
		"waitForPodsReady":      *cfg.WaitForPodsReady.RequeuingStrategy.Timestamp == CreationTimestamp,
		"clientConnection.qps":  ptr.Deref(cfg.ClientConnection.QPS, 0) == 120.5,
		"multiKueue.stepSize":   ptr.Deref(cfg.MultiKueue.IncrementalDispatcherConfig.StepSize, 0) == 2,
		"fairSharing":           len(cfg.FairSharing.PreemptionStrategies) == 2,
		"admissionFairSharing":  cfg.AdmissionFairSharing.ResourceWeights["nvidia.com/gpu"] == 10.5,
		"resources.outputs":     cfg.Resources.Transformations[0].Outputs["example.com/gpu-memory"].Equal(resource.MustParse("5Gi")),
		"transformation retain": ptr.Deref(cfg.Resources.Transformations[1].Strategy, "") == Retain,
		"featureGates":          cfg.FeatureGates["TopologyAwareScheduling"],
		"retention":             cfg.ObjectRetentionPolicies.Workloads.AfterDeactivatedByKueue.Duration == 0,
		"visibilityServer":      ptr.Deref(cfg.VisibilityServer.BindPort, 0) == 9082,
		"execConfig":            cfg.MultiKueue.ClusterProfile.AccessProviders[0].ExecConfig.Env[0].Value == "us-east1",
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("field %s was not decoded as written", name)
		}
	}

	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatalf("yaml.Marshal() error: %v", err)
	}
	again, err := Decode(out)
	if err != nil {
		t.Fatalf("Decode(marshalled config) error: %v\n%s", err, out)
	}
	if !equality.Semantic.DeepEqual(cfg, again) {
		t.Errorf("round trip changed the configuration (-loaded +reloaded):\n%s", diff.Diff(cfg, again))
	}
}

func TestLoadShippedSample(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "shipped.yaml"))
	if err != nil {
		t.Fatalf("Load() error: %v", err)
	}
	if got := len(cfg.Integrations.Frameworks); got != 12 {
		t.Errorf("got %d frameworks, want 12", got)
	}
	if got := cfg.Controller.GroupKindConcurrency["Workload.kueue.x-k8s.io"]; got != 10 {
		t.Errorf("Workload concurrency = %d, want 10", got)
	}
	if got := ptr.Deref(cfg.ClientConnection.Burst, 0); got != 100 {
		t.Errorf("burst = %d, want 100", got)
	}
	if got := cfg.WaitForPodsReady.Timeout.Duration; got != DefaultPodsReadyTimeout {
		t.Errorf("waitForPodsReady.timeout = %v, want the default", got)
	}
}

func TestDecodeMinimalGetsDefaults(t *testing.T) {
	cfg, err := Decode([]byte(header))
	if err != nil {
		t.Fatalf("Decode() error: %v", err)
	}
	want := fullyDefaulted()
	want.TypeMeta = cfg.TypeMeta
	if ns := ServiceAccountNamespace(); ns != DefaultNamespace {
		SetDefaultsWithNamespace(want, ns) // running inside a pod
	}
	if !equality.Semantic.DeepEqual(want, cfg) {
		t.Errorf("Decode() mismatch (-want +got):\n%s", diff.Diff(want, cfg))
	}
}

type loadErrorCase struct {
	path    string
	wantIs  error
	wantMsg []string
}

// loadErrorCases writes the broken files into dir and describes the errors
// Load must return for them.
func loadErrorCases(t *testing.T, dir string) map[string]loadErrorCase {
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return map[string]loadErrorCase{
		"missing file": {
			path:   filepath.Join(dir, "absent.yaml"),
			wantIs: os.ErrNotExist, wantMsg: []string{"absent.yaml"},
		},
		"empty file": {
			path:   write("empty.yaml", "\n  \n"),
			wantIs: ErrEmptyConfiguration, wantMsg: []string{"empty.yaml", "empty"},
		},
		"comments only": {
			path:   write("comments.yaml", "# nothing here\n"),
			wantIs: ErrEmptyConfiguration,
		},
		"missing apiVersion": {
			path:    write("noversion.yaml", "kind: Configuration\n"),
			wantMsg: []string{"apiVersion is missing"},
		},
		"v1alpha1 file": {
			path:    write("v1alpha1.yaml", "apiVersion: config.kueue.x-k8s.io/v1alpha1\nkind: Configuration\n"),
			wantMsg: []string{`unsupported apiVersion "config.kueue.x-k8s.io/v1alpha1"`},
		},
		"wrong kind": {
			path:    write("kind.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"),
			wantMsg: []string{`unsupported kind "ClusterQueue"`},
		},
		"not an object": {
			path:    write("list.yaml", "- a\n- b\n"),
			wantMsg: []string{"must be an object"},
		},
		"unknown nested field": {
			path:    write("unknown.yaml", header+"integrations:\n  framework: [batch/job]\n"),
			wantMsg: []string{`unknown field "integrations.framework"`},
		},
		"unknown field in a list item": {
			path:    write("unknown2.yaml", header+"resources:\n  transformations:\n  - input: cpu\n    output: {}\n"),
			wantMsg: []string{`unknown field "resources.transformations[0].output"`},
		},
		"field names are case-sensitive": {
			path:    write("case.yaml", header+"Namespace: x\n"),
			wantMsg: []string{`unknown field "Namespace"`},
		},
		"duplicate YAML key": {
			path:    write("dup.yaml", header+"namespace: a\nnamespace: b\n"),
			wantMsg: []string{`"namespace" already set`},
		},
		"duplicate JSON key": {
			path:    write("dup.json", `{"apiVersion":"config.kueue.x-k8s.io/v1beta2","kind":"Configuration","webhook":{"port":1,"port":2}}`),
			wantMsg: []string{`"port" already set`},
		},
		"malformed duration": {
			path:    write("duration.yaml", header+"waitForPodsReady:\n  timeout: soon\n"),
			wantMsg: []string{"waitForPodsReady.timeout", "invalid duration"},
		},
		"malformed quantity": {
			path:    write("quantity.yaml", header+"resources:\n  transformations:\n  - input: a\n    outputs:\n      b: lots\n"),
			wantMsg: []string{"resources.transformations[0].outputs[b]"},
		},
		"wrong type": {
			path:    write("type.yaml", header+"webhook:\n  port: high\n"),
			wantMsg: []string{"webhook.port"},
		},
		"several invalid fields are all named": {
			path:    write("invalid.yaml", header+"integrations:\n  frameworks: [batch/job, nope]\nvisibilityServer:\n  bindPort: 0\n"),
			wantMsg: []string{"invalid configuration", "integrations.frameworks[1]", "visibilityServer.bindPort"},
		},
	}
}

func TestLoadErrors(t *testing.T) {
	for name, tc := range loadErrorCases(t, t.TempDir()) {
		t.Run(name, func(t *testing.T) {
			cfg, err := Load(tc.path)
			if err == nil {
				t.Fatalf("Load() = %+v, want an error", cfg)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("Load() error %q does not wrap %v", err, tc.wantIs)
			}
			for _, msg := range tc.wantMsg {
				if !strings.Contains(err.Error(), msg) {
					t.Errorf("Load() error %q does not contain %q", err, msg)
				}
			}
		})
	}
}

func TestDecodeAcceptsJSON(t *testing.T) {
	data := `{"apiVersion":"config.kueue.x-k8s.io/v1beta2","kind":"Configuration",` +
		`"integrations":{"frameworks":["batch/job","pod"]},"fairSharing":{"preemptionStrategies":["LessThanInitialShare"]}}`
	cfg, err := Decode([]byte(data))
	if err != nil {
		t.Fatalf("Decode() error: %v", err)
	}
	if len(cfg.Integrations.Frameworks) != 2 || cfg.FairSharing == nil {
		t.Errorf("Decode() = %+v, JSON fields not decoded", cfg)
	}
}
