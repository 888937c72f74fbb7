package devcluster

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// The kwokctl configuration adds the aggregation flags to kube-apiserver,
// with the cluster's CA as the front-proxy CA.
func TestAggregationConfig(t *testing.T) {
	o := Options{Name: "c", WorkDir: "/w"}
	var cfg struct {
		APIVersion        string `json:"apiVersion"`
		Kind              string `json:"kind"`
		ComponentsPatches []struct {
			Name      string `json:"name"`
			ExtraArgs []struct {
				Key, Value string
			} `json:"extraArgs"`
		} `json:"componentsPatches"`
	}
	if err := yaml.UnmarshalStrict([]byte(o.AggregationConfig()), &cfg); err != nil {
		t.Fatalf("not a valid KwokctlConfiguration: %v\n%s", err, o.AggregationConfig())
	}
	if cfg.Kind != "KwokctlConfiguration" || len(cfg.ComponentsPatches) != 1 || cfg.ComponentsPatches[0].Name != "kube-apiserver" {
		t.Fatalf("config %+v, want one kube-apiserver patch", cfg)
	}
	args := map[string]string{}
	for _, a := range cfg.ComponentsPatches[0].ExtraArgs {
		args[a.Key] = a.Value
	}
	want := map[string]string{
		"requestheader-client-ca-file": filepath.Join("/w", "clusters", "c", "pki", "ca.crt"),
		"requestheader-allowed-names":  "kwok-admin",
		"enable-aggregator-routing":    "true",
	}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("--%s = %q, want %q", k, args[k], v)
		}
	}
}
