// Package metrics defines Kuota's Prometheus metrics and the functions that
// record them. Names, types, label names (and their order) and histogram
// buckets are exactly Kueue's (kueue_* and multikueue_*), so dashboards and
// alerts written for Kueue keep working.
//
// Every family except kueue_build_info carries the replica_role label; the
// recording functions fill it from SetReplicaRole. Callers name events
// ("a workload was admitted", "a ClusterQueue's pending counts changed");
// the package turns them into series. Deleting an object deletes its series
// through ClearClusterQueue, ClearLocalQueue and ClearCohort.
//
// The collectors live in package state and are only exposed through
// Register. Each Register call builds a fresh set of collectors, registers
// it and makes it the one that recording functions write to; before the
// first Register, recording goes to an unregistered set. Recording
// functions are safe for concurrent use.
package metrics

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Replica roles, the values of the replica_role label.
const (
	RoleLeader     = "leader"
	RoleFollower   = "follower"
	RoleStandalone = "standalone"
)

// state is what recording functions share: the current collectors and the
// current replica role. Recording holds the read lock while it writes, so
// a role change never races with a write under the old role.
type state struct {
	mu    sync.RWMutex
	set   *collectors
	role  string
	build [3]string // git version, git commit, build date
}

var st = &state{set: newCollectors(), role: RoleStandalone, build: defaultBuild()}

// record runs fn with the current collectors and role.
func record(fn func(c *collectors, role string)) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	fn(st.set, st.role)
}

// Register defines a fresh set of every metric, registers it with reg
// (normally controller-runtime's metrics.Registry) and makes it the set
// that recording functions write to. kueue_replaced_workload_slices_total
// is defined but, as in Kueue, not registered. On error nothing stays
// registered and the previous set remains current.
func Register(reg prometheus.Registerer) error {
	if reg == nil {
		return errors.New("metrics: nil registerer")
	}
	c := newCollectors()
	var done []prometheus.Collector
	for _, f := range c.families {
		if f.unexported {
			continue
		}
		if err := reg.Register(f.col); err != nil {
			for _, d := range done {
				reg.Unregister(d)
			}
			return fmt.Errorf("metrics: registering %s: %w", f.name, err)
		}
		done = append(done, f.col)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.set = c
	setBuildInfo(c, st.build)
	return nil
}

// SetReplicaRole sets the replica_role label value of everything recorded
// from now on (RoleLeader, RoleFollower or RoleStandalone; "" means
// standalone). Gauges describe current state, so their series move to the
// new role with their values; counters and histograms keep their old series.
func SetReplicaRole(role string) {
	if role == "" {
		role = RoleStandalone
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if role == st.role {
		return
	}
	for _, f := range st.set.families {
		if f.kind == kindGauge && f.hasLabel(roleLabel) {
			moveRole(f, st.role, role)
		}
	}
	st.role = role
}

// ReplicaRole returns the current replica_role label value.
func ReplicaRole() string {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.role
}

// moveRole re-labels every series of gauge family f from role from to role
// to, keeping its value.
func moveRole(f *family, from, to string) {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		f.vec.Collect(ch)
		close(ch)
	}()
	var moved []prometheus.Labels
	var values []float64
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		labels := prometheus.Labels{}
		for _, lp := range pb.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if labels[roleLabel] != from {
			continue
		}
		moved = append(moved, labels)
		values = append(values, pb.GetGauge().GetValue())
	}
	g := &prometheus.GaugeVec{MetricVec: f.vec}
	for i, labels := range moved {
		g.Delete(labels)
		labels[roleLabel] = to
		g.With(labels).Set(values[i])
	}
}

// SetBuildInfo sets the version, commit and build date reported by
// kueue_build_info (the Go version, compiler and platform come from the
// running binary). Without it, the values come from the binary's embedded
// module and VCS information.
func SetBuildInfo(gitVersion, gitCommit, buildDate string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.build = [3]string{gitVersion, gitCommit, buildDate}
	setBuildInfo(st.set, st.build)
}

func setBuildInfo(c *collectors, b [3]string) {
	c.buildInfo.Reset()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	c.buildInfo.WithLabelValues(b[0], b[1], b[2], runtime.Version(), runtime.Compiler, platform).Set(1)
}

// defaultBuild reads the version, commit and commit time embedded by the
// Go toolchain.
func defaultBuild() [3]string {
	out := [3]string{"unknown", "unknown", "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	if v := info.Main.Version; v != "" {
		out[0] = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			out[1] = s.Value
		case "vcs.time":
			out[2] = s.Value
		}
	}
	return out
}
