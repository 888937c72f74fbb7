package app

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// zapTo is the manager's kind of logger, writing JSON lines to buf, with
// the caller of each line.
func zapTo(buf *bytes.Buffer) logr.Logger {
	return zap.New(zap.WriteTo(buf), zap.Level(zapcore.Level(-2)), zap.RawZapOpts(uberzap.AddCaller()))
}

var timestamp = regexp.MustCompile(`"ts":("[^"]*"|[0-9.e+]+),`)

// logLines writes the same lines through l, as controllers do: names and
// values added first, some levels filtered out.
func logLines(l logr.Logger) {
	r := l.WithName("workload").WithValues("namespace", "ns", "name", "a").WithValues("reconcileID", "1")
	r.Info("reconciling", "step", 1)
	r.V(1).Info("detail", "step", 2)
	r.V(5).Info("filtered out")
	r.WithName("status").Error(errors.New("conflict"), "writing status", "attempt", 3)
	l.Info("bare")
}

// The lazy logger writes exactly the lines the zap logger writes, with the
// same names, values, levels and callers.
func TestLazyValuesWritesTheSameLines(t *testing.T) {
	var direct, lazy bytes.Buffer
	for _, l := range []logr.Logger{zapTo(&direct), LazyValues(zapTo(&lazy))} {
		logLines(l) // one line, so that the stack traces match
	}
	want := timestamp.ReplaceAllString(direct.String(), "")
	got := timestamp.ReplaceAllString(lazy.String(), "")
	if got != want {
		t.Fatalf("lazy logger wrote\n%s\nthe zap logger wrote\n%s", got, want)
	}
	if n := strings.Count(want, "\n"); n != 4 || !strings.Contains(want, `"caller":"app/lazylog_test.go`) {
		t.Fatalf("the reference output is not what the test expects (4 lines with callers):\n%s", want)
	}
}

// BenchmarkReconcileLogger is what controller-runtime does for each
// reconcile: a logger with the request's values, usually never written to.
func BenchmarkReconcileLogger(b *testing.B) {
	var buf bytes.Buffer
	for _, c := range []struct {
		name string
		l    logr.Logger
	}{{"zap", zapTo(&buf)}, {"lazy", LazyValues(zapTo(&buf))}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l := c.l.WithValues("controller", "workload", "namespace", "ns", "name", "a").WithValues("reconcileID", "0f8e")
				l.V(5).Info("not written") // below the level: filtered
			}
		})
	}
}
