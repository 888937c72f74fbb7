package app

import (
	"testing"

	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

func TestPprofAddress(t *testing.T) {
	for in, want := range map[string]string{
		"":               "",
		"0":              "",
		":8083":          "127.0.0.1:8083",
		":0":             "127.0.0.1:0",
		"0.0.0.0:8083":   "0.0.0.0:8083",
		"10.1.2.3:8083":  "10.1.2.3:8083",
		"localhost:6060": "localhost:6060",
		"[::1]:8083":     "[::1]:8083",
		"[::]:8083":      "[::]:8083",
		"nonsense":       "nonsense",
	} {
		if got := pprofAddress(in); got != want {
			t.Errorf("pprofAddress(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMetricsOptions(t *testing.T) {
	cfg, err := configapi.Decode([]byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := metricsOptions(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !o.SecureServing || o.FilterProvider == nil || o.BindAddress != configapi.DefaultMetricsBindAddress {
		t.Errorf("default: secure %v, filter set %v, address %q; want HTTPS with authn/authz on %s",
			o.SecureServing, o.FilterProvider != nil, o.BindAddress, configapi.DefaultMetricsBindAddress)
	}

	o, err = metricsOptions(Options{Config: cfg, SecureMetrics: ptr.To(false), MetricsBindAddress: ptr.To("0")})
	if err != nil {
		t.Fatal(err)
	}
	if o.SecureServing || o.FilterProvider != nil || o.BindAddress != "0" {
		t.Errorf("overrides: secure %v, filter set %v, address %q", o.SecureServing, o.FilterProvider != nil, o.BindAddress)
	}

	cfg.TLS = &configapi.TLSOptions{MinVersion: "VersionTLS12"}
	if o, err = metricsOptions(Options{Config: cfg}); err != nil || len(o.TLSOpts) != 1 {
		t.Errorf("tls block: %d options, %v", len(o.TLSOpts), err)
	}
	cfg.TLS = &configapi.TLSOptions{MinVersion: "VersionTLS99"}
	if _, err := metricsOptions(Options{Config: cfg}); err == nil {
		t.Error("an invalid tls block is accepted")
	}
}
