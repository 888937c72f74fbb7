package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kuota-dev/kuota/internal/demo"
)

// checkoutEnv is a test Env whose working directory is inside a fake
// checkout of Kuota (a go.mod declaring the module).
func checkoutEnv(t *testing.T) (Env, string) {
	t.Helper()
	env, _, _ := testEnv(t)
	root := env.WorkingDir
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/kuota-dev/kuota\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.WorkingDir = filepath.Join(root, "internal")
	return env, root
}

func runDemoCommand(t *testing.T, env Env, args ...string) (demo.Options, error) {
	t.Helper()
	var got demo.Options
	run := func(_ context.Context, o demo.Options) error { got = o; return nil }
	cmd := newDemoCommand("kuota", env, run)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

func TestDemoFlagsToOptions(t *testing.T) {
	env, root := checkoutEnv(t)
	o, err := runDemoCommand(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if o.Root != root || o.ManagerBin != filepath.Join(root, "bin", "kuota-manager") ||
		o.StateDir != filepath.Join(root, ".cache", "demo") || o.Keep || o.Terminal {
		t.Errorf("defaults: %+v", o)
	}
	if o.Stream != (demo.StreamOptions{Seed: demo.DefaultSeed, Jobs: demo.DefaultJobs, Window: demo.DefaultWindow}) {
		t.Errorf("stream %+v", o.Stream)
	}
	if o.Cluster.Name != "kuota" || o.Cluster.WorkDir != filepath.Join(root, ".cache", "kwok") {
		t.Errorf("cluster %s in %s: `make demo-down` would not find it", o.Cluster.Name, o.Cluster.WorkDir)
	}

	o, err = runDemoCommand(t, env, "--keep", "--jobs", "60", "--seed", "7", "--manager", "/x/mgr", "--name", "other")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Keep || o.Stream.Jobs != 60 || o.Stream.Seed != 7 || o.ManagerBin != "/x/mgr" || o.Cluster.Name != "other" {
		t.Errorf("flags: %+v", o)
	}
}

func TestDemoErrors(t *testing.T) {
	env, _ := checkoutEnv(t)
	for args, want := range map[string]string{
		"--jobs 2":    "--jobs: the number of jobs must be between",
		"--jobs many": `invalid argument "many" for "--jobs"`,
		"extra":       `unknown command "extra"`,
	} {
		if _, err := runDemoCommand(t, env, strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("demo %s = %v, want an error containing %q", args, err, want)
		}
	}
	outside, _, _ := testEnv(t)
	if _, err := runDemoCommand(t, outside); err == nil || !strings.Contains(err.Error(), "checkout of Kuota") {
		t.Errorf("demo outside a checkout = %v", err)
	}
	failing := errors.New("boom")
	cmd := newDemoCommand("kuota", env, func(context.Context, demo.Options) error { return failing })
	cmd.SetArgs(nil)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.ExecuteContext(context.Background()); !errors.Is(err, failing) {
		t.Errorf("the run's error is lost: %v", err)
	}
}

func TestDemoRegistered(t *testing.T) {
	env, out, _ := testEnv(t)
	root := NewRootCommand("kuota", env)
	root.SetArgs([]string{"demo", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kuota demo --keep", "--jobs", "--seed", "(default 40)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}
