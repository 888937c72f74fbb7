package jobs

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
)

// managerLog receives what the managers of this package log. It drops
// everything (as logr.Discard would) until a test arms it: then it keeps
// the lines of verbosity 0 and the errors, so that the test can assert on
// what the manager reported (a failed status write, say).
var managerLog = &logTap{}

type logTap struct {
	mu    sync.Mutex
	armed bool
	lines []string
}

// record arms the tap for the running test and returns a function that
// gives the lines kept so far; the tap is disarmed and emptied at the end
// of the test.
func (l *logTap) record(t *testing.T) func() []string {
	l.mu.Lock()
	l.armed, l.lines = true, nil
	l.mu.Unlock()
	t.Cleanup(func() {
		l.mu.Lock()
		l.armed, l.lines = false, nil
		l.mu.Unlock()
	})
	return func() []string {
		l.mu.Lock()
		defer l.mu.Unlock()
		return append([]string(nil), l.lines...)
	}
}

// containing returns the lines that hold s.
func containing(lines []string, s string) []string {
	var out []string
	for _, line := range lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func (l *logTap) isArmed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.armed
}

func (l *logTap) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.armed {
		l.lines = append(l.lines, line)
	}
}

// sink returns the tap as a logr sink.
func (l *logTap) sink() logr.LogSink { return &tapSink{tap: l} }

// tapSink is one logger of the tap: its name and values.
type tapSink struct {
	tap    *logTap
	name   string
	values []any
}

var _ logr.LogSink = (*tapSink)(nil)

func (s *tapSink) Init(logr.RuntimeInfo) {}

func (s *tapSink) Enabled(level int) bool { return level <= 0 && s.tap.isArmed() }

func (s *tapSink) Info(_ int, msg string, kv ...any) {
	s.tap.add(fmt.Sprintf("%s: %s %v %v", s.name, msg, s.values, kv))
}

func (s *tapSink) Error(err error, msg string, kv ...any) {
	if !s.tap.isArmed() {
		return
	}
	s.tap.add(fmt.Sprintf("ERROR %s: %s: %v %v %v", s.name, msg, err, s.values, kv))
}

func (s *tapSink) WithValues(kv ...any) logr.LogSink {
	return &tapSink{tap: s.tap, name: s.name, values: append(append([]any(nil), s.values...), kv...)}
}

func (s *tapSink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "." + name
	}
	return &tapSink{tap: s.tap, name: name, values: s.values}
}
