// Package plugin tests the kubectl plugin's commands (kubectl kuota, the
// commands of Kueue's kueuectl) against a real API server: each command runs
// in the test process with its output captured and compared with a golden
// file in testdata/ (go test -update rewrites them). Ages are stable because
// the commands' clock is set 20 years ahead: every object is "20y" old.
package plugin

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/kubectl"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the commands' output")
	env    *framework.Env
	// kubeconfig is the path of a kubeconfig file for the test API server.
	kubeconfig string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := framework.RunMain(m, &env)
	if kubeconfig != "" {
		_ = os.RemoveAll(filepath.Dir(kubeconfig))
	}
	os.Exit(code)
}

// twentyYears is how far ahead of the real time the commands' clock is.
const twentyYears = 20 * 365 * 24 * time.Hour

// kubeconfigFile writes the API server's kubeconfig once.
func kubeconfigFile(t *testing.T) string {
	t.Helper()
	if kubeconfig == "" {
		dir, err := os.MkdirTemp("", "kubectl-kuota-test")
		if err != nil {
			t.Fatal(err)
		}
		kubeconfig = filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(kubeconfig, env.KubeConfig(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return kubeconfig
}

// cacheDir is the discovery cache folder of the commands, next to the
// kubeconfig file.
func cacheDir(t *testing.T) string {
	return filepath.Join(filepath.Dir(kubeconfigFile(t)), "cache")
}

// kubectlBinary is the kubectl the pass-through commands run: the cached
// one, else the one on PATH; "" when there is none.
func kubectlBinary() string {
	if bin, err := paths.ToolsBin(); err == nil {
		if p := filepath.Join(bin, "kubectl"); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// transcript records commands and their output, for a golden file.
type transcript struct {
	t   *testing.T
	buf strings.Builder
}

func newTranscript(t *testing.T) *transcript { return &transcript{t: t} }

// run runs `kubectl kuota args...` with stdin, records it and returns its
// standard output and error.
func (tr *transcript) run(stdin string, args ...string) (string, error) {
	tr.t.Helper()
	out, errOut, err := kuota(tr.t, stdin, args...)
	tr.buf.WriteString("$ kubectl kuota " + strings.Join(args, " ") + "\n")
	tr.buf.WriteString(out)
	if errOut != "" {
		tr.buf.WriteString("[stderr]\n" + errOut)
	}
	if err != nil {
		tr.buf.WriteString("[error] " + err.Error() + "\n")
	}
	tr.buf.WriteString("\n")
	return out, err
}

// ok is run that fails the test when the command fails.
func (tr *transcript) ok(args ...string) string {
	tr.t.Helper()
	out, err := tr.run("", args...)
	if err != nil {
		tr.t.Fatalf("kubectl kuota %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// fails is run that fails the test when the command succeeds.
func (tr *transcript) fails(args ...string) error {
	tr.t.Helper()
	_, err := tr.run("", args...)
	if err == nil {
		tr.t.Fatalf("kubectl kuota %s succeeded, want an error", strings.Join(args, " "))
	}
	return err
}

// check compares the transcript with testdata/<test name>.golden.
func (tr *transcript) check() {
	tr.t.Helper()
	path := filepath.Join("testdata", strings.ReplaceAll(tr.t.Name(), "/", "_")+".golden")
	got := tr.buf.String()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tr.t.Fatalf("reading golden file (run with -update to write it): %v", err)
	}
	if got != string(want) {
		tr.t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// kuota runs the plugin's commands in the test process.
func kuota(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "kuota", SilenceUsage: true, SilenceErrors: true}
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kuota"}
	kubectl.AddCommands(root, kubectl.Options{
		In: strings.NewReader(stdin), Out: &out, Err: &errOut,
		Now:           func() time.Time { return time.Now().Add(twentyYears) },
		ClientVersion: "v0.0.0-test",
		KubectlPath:   kubectlBinary(),
	})
	root.SetOut(&out)
	root.SetErr(&errOut)
	// --cache-dir keeps discovery caches out of the user's home.
	root.SetArgs(append(append([]string{}, args...), "--kubeconfig", kubeconfigFile(t), "--cache-dir", cacheDir(t)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// namespace creates a namespace with a fixed name (golden files show it).
func namespace(t *testing.T, name string) string {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func get(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("reading %T %s: %v", obj, key, err)
	}
}
