package v1beta2

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// FuzzDecode checks that Decode never panics and that whatever it accepts
// is a defaulted, valid configuration.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"full.yaml", "shipped.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(header))
	f.Add([]byte(""))
	f.Add([]byte("null"))
	f.Add([]byte("[1, 2]"))
	f.Add([]byte(`{"apiVersion":"config.kueue.x-k8s.io/v1beta2","kind":"Configuration","webhook":{"port":1}}`))
	f.Add([]byte(`{"apiVersion":"config.kueue.x-k8s.io/v1beta1","kind":"Configuration","waitForPodsReady":{"enable":true},` +
		`"fairSharing":{"enable":true},"controller":{"cacheSyncTimeout":1000},"integrations":{"podOptions":{}},"queueVisibility":{}}`))
	for _, tc := range invalidYAML {
		f.Add([]byte(header + tc.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data)
		if err != nil {
			if cfg != nil {
				t.Fatalf("Decode() returned both a configuration and error %v", err)
			}
			return
		}
		if cfg == nil {
			t.Fatal("Decode() returned neither a configuration nor an error")
		}
		if cfg.APIVersion != GroupVersion.String() || cfg.Kind != Kind {
			t.Fatalf("Decode() accepted type %q %q", cfg.APIVersion, cfg.Kind)
		}
		if errs := Validate(cfg); len(errs) > 0 {
			t.Fatalf("Decode() returned an invalid configuration: %v", errs)
		}
		again := cfg.DeepCopy()
		SetDefaultsWithNamespace(again, ServiceAccountNamespace())
		if !equality.Semantic.DeepEqual(cfg, again) {
			t.Fatal("Decode() returned a configuration that defaulting still changes")
		}
	})
}
