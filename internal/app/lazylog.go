package app

import "github.com/go-logr/logr"

// LazyValues returns a logger that adds names and values to l only when a
// line is written. controller-runtime gives every reconcile a logger with
// the object's kind, namespace, name and a reconcile ID; the zap logger
// encodes such values at once into a fresh buffer (kilobytes per call), so
// on the baseline benchmark these loggers, nearly all of which never write
// a line, were a twentieth of the manager's allocations. The lines written
// are the same.
func LazyValues(l logr.Logger) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	return logr.New(&lazySink{base: l.GetSink()})
}

// lazySink records WithName and WithValues calls and replays them on its
// base sink when a line is written.
type lazySink struct {
	base  logr.LogSink
	steps []lazyStep
	depth int
}

// lazyStep is one WithName (name set) or WithValues call.
type lazyStep struct {
	name   string
	values []any
}

var _ logr.CallDepthLogSink = (*lazySink)(nil)

// Init does nothing: the base sink was initialised by its own logger, and
// the frame the lazy sink adds is counted when a line is written.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.base.Enabled(level) }

func (s *lazySink) Info(level int, msg string, keysAndValues ...any) {
	s.sink().Info(level, msg, keysAndValues...)
}

func (s *lazySink) Error(err error, msg string, keysAndValues ...any) {
	s.sink().Error(err, msg, keysAndValues...)
}

func (s *lazySink) WithValues(keysAndValues ...any) logr.LogSink {
	if len(keysAndValues) == 0 {
		return s
	}
	return s.with(lazyStep{values: append([]any(nil), keysAndValues...)})
}

func (s *lazySink) WithName(name string) logr.LogSink { return s.with(lazyStep{name: name}) }

func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	c := *s
	c.depth += depth
	return &c
}

func (s *lazySink) with(step lazyStep) *lazySink {
	steps := make([]lazyStep, len(s.steps)+1)
	copy(steps, s.steps)
	steps[len(s.steps)] = step
	return &lazySink{base: s.base, steps: steps, depth: s.depth}
}

// sink is the base sink with the recorded calls applied, in order, and the
// frames between the caller and the base sink skipped.
func (s *lazySink) sink() logr.LogSink {
	out := s.base
	for _, st := range s.steps {
		if st.values != nil {
			out = out.WithValues(st.values...)
		} else {
			out = out.WithName(st.name)
		}
	}
	if cd, ok := out.(logr.CallDepthLogSink); ok {
		out = cd.WithCallDepth(s.depth + 1) // Info or Error of this sink
	}
	return out
}
