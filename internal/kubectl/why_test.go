package kubectl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// why reads the manager's Configuration from --config, else from the
// install bundle's ConfigMap; a missing ConfigMap means the defaults, a
// broken one is reported and ignored, a broken file is an error.
func TestManagerConfiguration(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	afs := "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: 1h\n"
	cm := func(data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: managerConfigNamespace, Name: managerConfigName},
			Data: map[string]string{managerConfigKey: data}}
	}
	var errOut bytes.Buffer
	empty := fake.NewClientBuilder().WithScheme(scheme).Build()
	if cfg, err := managerConfiguration(ctx, empty, "", &errOut); cfg != nil || err != nil {
		t.Errorf("no ConfigMap: %v, %v; want the defaults", cfg, err)
	}
	withCM := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cm(afs)).Build()
	cfg, err := managerConfiguration(ctx, withCM, "", &errOut)
	if err != nil || cfg == nil || cfg.AdmissionFairSharing == nil || cfg.AdmissionFairSharing.UsageHalfLifeTime.Duration != time.Hour {
		t.Errorf("from the ConfigMap: %+v, %v", cfg, err)
	}
	broken := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cm("kind: [")).Build()
	if cfg, err := managerConfiguration(ctx, broken, "", &errOut); cfg != nil || err != nil || !strings.Contains(errOut.String(), "ignoring the manager's Configuration") {
		t.Errorf("broken ConfigMap: %v, %v, warning %q", cfg, err, errOut.String())
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: -1h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := managerConfiguration(ctx, withCM, file, &errOut); err == nil || !strings.Contains(err.Error(), "--config") || !strings.Contains(err.Error(), "usageHalfLifeTime") {
		t.Errorf("broken file: error %v, want one naming --config and the field", err)
	}
}
