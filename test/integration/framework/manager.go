package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
)

// ManagerConfig returns a defaulted Configuration for tests: no leader
// election, no metrics or health servers.
func ManagerConfig(mutate ...func(*configapi.Configuration)) (*configapi.Configuration, error) {
	cfg, err := configapi.Decode([]byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nleaderElection:\n  leaderElect: false\n"))
	if err != nil {
		return nil, err
	}
	for _, m := range mutate {
		m(cfg)
	}
	return cfg, nil
}

// Manager is a Kuota manager running in the test process.
type Manager struct {
	*app.Manager
	restart func() (*Manager, error)
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
	err     error
}

// StartManager starts a manager against the environment's API server and
// waits until its caches have synced.
func (e *Env) StartManager(cfg *configapi.Configuration) (*Manager, error) {
	return e.StartManagerWith(cfg, nil)
}

// StartManagerWith is StartManager with the test defaults of app.Options
// (no metrics, health or visibility servers) changed by override before the manager
// is built.
func (e *Env) StartManagerWith(cfg *configapi.Configuration, override func(*app.Options)) (*Manager, error) {
	return e.startManager(cfg, override, nil)
}

// StartManagerPrepared is StartManager with prepare called on the built
// manager before it starts (tests replace parts of the scheduler with it).
func (e *Env) StartManagerPrepared(cfg *configapi.Configuration, prepare func(*app.Manager)) (*Manager, error) {
	return e.startManager(cfg, nil, prepare)
}

// StartManagerWithPrepared is StartManager with both override (of the
// options, before the manager is built) and prepare (of the built manager,
// before it starts); either may be nil.
func (e *Env) StartManagerWithPrepared(cfg *configapi.Configuration, override func(*app.Options), prepare func(*app.Manager)) (*Manager, error) {
	return e.startManager(cfg, override, prepare)
}

func (e *Env) startManager(cfg *configapi.Configuration, override func(*app.Options), prepare func(*app.Manager)) (*Manager, error) {
	opts := app.Options{RestConfig: e.Config, Config: cfg,
		MetricsBindAddress: ptr.To("0"), HealthBindAddress: ptr.To("0"), SecureMetrics: ptr.To(false),
		SkipControllerNameValidation: true, Visibility: ptr.To(false)}
	if override != nil {
		override(&opts)
	}
	m, err := app.New(opts)
	if err != nil {
		return nil, err
	}
	if prepare != nil {
		prepare(m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mm := &Manager{Manager: m, cancel: cancel, done: make(chan error, 1),
		restart: func() (*Manager, error) { return e.startManager(cfg, override, prepare) }}
	go func() { mm.done <- m.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !m.GetCache().WaitForCacheSync(syncCtx) {
		mm.Stop()
		return nil, fmt.Errorf("manager caches did not sync")
	}
	return mm, nil
}

// Stop stops the manager and waits for it to return; stopping it again
// returns the first outcome.
func (m *Manager) Stop() error {
	m.once.Do(func() {
		m.cancel()
		select {
		case m.err = <-m.done:
		case <-time.After(60 * time.Second):
			m.err = fmt.Errorf("manager did not stop within 60s")
		}
	})
	return m.err
}

// Restart stops the manager and starts a new one as it was started: a
// manager process restarting with what it held in memory lost.
func (m *Manager) Restart() (*Manager, error) {
	if err := m.Stop(); err != nil {
		return nil, fmt.Errorf("stopping the manager: %w", err)
	}
	return m.restart()
}

// WaitCycles wakes the scheduler and waits for one more scheduling cycle,
// n times, calling check after each cycle; it returns check's first error,
// or an error if a cycle does not come within timeout. Tests use it to say
// "after n more cycles it is still pending" instead of sleeping.
func (m *Manager) WaitCycles(n int, timeout time.Duration, check func() error) error {
	for i := range n {
		before := m.Scheduler.Cycles()
		m.Cache.Poke()
		deadline := time.Now().Add(timeout)
		for m.Scheduler.Cycles() <= before {
			if time.Now().After(deadline) {
				return fmt.Errorf("no scheduling cycle within %s (cycle %d of %d)", timeout, i+1, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if check != nil {
			if err := check(); err != nil {
				return fmt.Errorf("after %d more scheduling cycles: %w", i+1, err)
			}
		}
	}
	return nil
}
