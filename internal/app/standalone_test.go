package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

func TestNamespaceMissing(t *testing.T) {
	ctx := context.Background()
	present := fake.NewClientBuilder().WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}}).Build()
	if missing, err := NamespaceMissing(ctx, present, "kueue-system"); err != nil || missing {
		t.Fatalf("existing namespace: missing=%v err=%v, want false, nil", missing, err)
	}
	if missing, err := NamespaceMissing(ctx, present, "other"); err != nil || !missing {
		t.Fatalf("absent namespace: missing=%v err=%v, want true, nil", missing, err)
	}
	denied := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("forbidden")
		},
	}).Build()
	if missing, err := NamespaceMissing(ctx, denied, "kueue-system"); err == nil || missing {
		t.Fatalf("failed read: missing=%v err=%v, want false and an error", missing, err)
	}
}

func TestStandaloneRunsWithoutLeaderElectionOrWebhooks(t *testing.T) {
	cfg, err := configapi.Decode([]byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(cfg.LeaderElection.LeaderElect, false) {
		t.Fatal("the default Configuration should elect a leader")
	}
	hooks := []func(ctrl.Manager) error{func(ctrl.Manager) error { return nil }}
	installed := Options{Config: cfg, Webhooks: hooks}
	if o := managerOptions(installed, nil); !o.LeaderElection || o.LeaderElectionNamespace != "kueue-system" {
		t.Fatalf("installed: leader election %v in %q, want on in kueue-system", o.LeaderElection, o.LeaderElectionNamespace)
	}
	if !webhooksEnabled(installed) {
		t.Fatal("installed: webhooks off, want on")
	}
	alone := installed
	alone.Standalone = true
	if o := managerOptions(alone, nil); o.LeaderElection {
		t.Fatal("standalone: leader election on, want off (its Lease would need the missing namespace)")
	}
	if webhooksEnabled(alone) {
		t.Fatal("standalone: webhooks on, want off (their certificate Secret would need the missing namespace)")
	}
	alone.LocalWebhooks = true
	if !webhooksEnabled(alone) {
		t.Fatal("standalone in local mode: webhooks off, want on (local mode keeps its certificate on disk)")
	}
}

func TestProfilesWriteBothFiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	p, err := StartProfiles(cpu, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cpu, mem} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v, want a non-empty profile", f, err)
		}
	}
	if _, err := StartProfiles(filepath.Join(dir, "no", "such", "dir"), ""); err == nil {
		t.Fatal("a CPU profile in a missing directory: no error")
	}
}
