package framework

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// envtest starts etcd and kube-apiserver in process groups of their own,
// so an interrupted test run (Ctrl-C, or make killed) would leave them
// running, and they slow down or break the next run. Every started Env is
// noted here; SIGINT, SIGTERM or SIGHUP stops them all before the test
// binary exits.
var running struct {
	sync.Mutex
	envs map[*Env]bool // nil until the first Env, which arms the handler
}

func noteRunning(e *Env) {
	running.Lock()
	defer running.Unlock()
	if running.envs == nil {
		running.envs = map[*Env]bool{}
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			sig := <-signals
			fmt.Fprintf(os.Stderr, "framework: %s: stopping the test control planes\n", sig)
			stopAll()
			os.Exit(2)
		}()
	}
	running.envs[e] = true
}

func noteStopped(e *Env) {
	running.Lock()
	defer running.Unlock()
	delete(running.envs, e)
}

func stopAll() {
	running.Lock()
	envs := make([]*Env, 0, len(running.envs))
	for e := range running.envs {
		envs = append(envs, e)
	}
	running.Unlock()
	for _, e := range envs {
		_ = e.Stop()
	}
}
