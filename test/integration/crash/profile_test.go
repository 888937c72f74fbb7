package crash

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// profile is what one run does: how many faults of each kind, how many
// manager replicas, and how many workloads flow meanwhile.
type profile struct {
	name string
	// kills: SIGKILLs of a manager replica.
	kills int
	// apiRestarts, etcdRestarts: graceful restarts of kube-apiserver and
	// of etcd, spread among the kills.
	apiRestarts, etcdRestarts int
	// pauses: the leader stopped (SIGSTOP) past its lease while another
	// replica takes over, then let go on (SIGCONT).
	pauses int
	// drops: every connection between the replicas and kube-apiserver
	// cut at once (dropWatches), sometimes followed by a short spell of
	// refused connections.
	drops int
	// replicas: manager processes running at once under one lease.
	replicas int
	// workloads created, admitted and finished during the run.
	workloads int
	// quiescentAudits: full audits mid-run, with the flow paused so that
	// the status must converge.
	quiescentAudits int
	// gapMin, gapMax bound the random pause before each fault.
	gapMin, gapMax time.Duration
	// drain bounds the wait for the last workloads after the last fault.
	drain time.Duration
	seed  uint64
}

// The short profile runs in `make test`; KUOTA_TORTURE=1 selects the full
// one (`make torture`).
var (
	shortProfile = profile{name: "short", kills: 20, apiRestarts: 1, etcdRestarts: 1, pauses: 2, drops: 3, replicas: 2,
		workloads: 400, quiescentAudits: 1, gapMin: 1500 * time.Millisecond, gapMax: 2500 * time.Millisecond,
		drain: 90 * time.Second, seed: 42}
	fullProfile = profile{name: "full", kills: 200, apiRestarts: 5, etcdRestarts: 2, pauses: 10, drops: 20, replicas: 2,
		workloads: 6000, quiescentAudits: 5, gapMin: 2 * time.Second, gapMax: 4500 * time.Millisecond,
		drain: 5 * time.Minute}
)

// Environment variables that choose and adjust the profile.
const (
	envTorture      = "KUOTA_TORTURE"
	envKills        = "KUOTA_CRASH_KILLS"
	envAPIRestarts  = "KUOTA_CRASH_API_RESTARTS"
	envEtcdRestarts = "KUOTA_CRASH_ETCD_RESTARTS"
	envPauses       = "KUOTA_CRASH_PAUSES"
	envDrops        = "KUOTA_CRASH_DROPS"
	envReplicas     = "KUOTA_CRASH_REPLICAS"
	envWorkloads    = "KUOTA_CRASH_WORKLOADS"
	envSeed         = "KUOTA_CRASH_SEED"
)

// loadProfile picks the short or the full profile and applies the
// KUOTA_CRASH_* overrides. The full profile draws a new seed each run
// unless KUOTA_CRASH_SEED fixes it; the figures print it.
func loadProfile() (profile, error) {
	p := shortProfile
	if os.Getenv(envTorture) == "1" {
		p = fullProfile
		p.seed = rand.Uint64() % 1_000_000
	}
	for _, o := range []struct {
		env string
		dst *int
		min int
	}{
		{envKills, &p.kills, 0}, {envAPIRestarts, &p.apiRestarts, 0}, {envEtcdRestarts, &p.etcdRestarts, 0}, {envPauses, &p.pauses, 0}, {envDrops, &p.drops, 0},
		{envReplicas, &p.replicas, 1}, {envWorkloads, &p.workloads, 1},
	} {
		v := os.Getenv(o.env)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < o.min {
			return p, fmt.Errorf("%s=%q: want an integer >= %d", o.env, v, o.min)
		}
		*o.dst = n
	}
	if v := os.Getenv(envSeed); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("%s=%q: want an unsigned integer", envSeed, v)
		}
		p.seed = n
	}
	return p, nil
}

// String names the profile and its numbers, to reproduce a run.
func (p profile) String() string {
	return fmt.Sprintf("%s profile: %d kills, %d API server restarts, %d etcd restarts, %d leader pauses, %d dropped connections, %d replicas, %d workloads, seed %d (%s=%d)",
		p.name, p.kills, p.apiRestarts, p.etcdRestarts, p.pauses, p.drops, p.replicas, p.workloads, p.seed, envSeed, p.seed)
}

// fault is one event of the schedule.
type fault int

const (
	faultKill fault = iota
	faultAPIServer
	faultEtcd
	faultPause
	faultDrop
)

// schedule shuffles the faults; restarts never come first, so that the
// first fault lands on a flow that is already running.
func (p profile) schedule(rng *rand.Rand) []fault {
	out := make([]fault, 0, p.faults())
	for range p.kills {
		out = append(out, faultKill)
	}
	for range p.apiRestarts {
		out = append(out, faultAPIServer)
	}
	for range p.etcdRestarts {
		out = append(out, faultEtcd)
	}
	for range p.pauses {
		out = append(out, faultPause)
	}
	for range p.drops {
		out = append(out, faultDrop)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i := range out {
		if out[i] == faultKill && out[0] != faultKill {
			out[0], out[i] = out[i], out[0]
		}
	}
	return out
}

// plannedDuration estimates the fault phase, to pace workload creation
// over it. A restart takes about 8 s.
func (p profile) plannedDuration() time.Duration {
	return time.Duration(p.faults())*(p.gapMin+p.gapMax)/2 + time.Duration(p.apiRestarts+p.etcdRestarts)*8*time.Second +
		time.Duration(p.pauses)*pauseFor + time.Duration(p.drops)*(refuseMin+refuseMax)/4
}

// faults is the length of the schedule.
func (p profile) faults() int {
	return p.kills + p.apiRestarts + p.etcdRestarts + p.pauses + p.drops
}

// quiescentAfter reports whether a quiescent audit follows fault i of n.
func (p profile) quiescentAfter(i, n int) bool {
	for k := 1; k <= p.quiescentAudits; k++ {
		if i == k*n/(p.quiescentAudits+1) {
			return true
		}
	}
	return false
}
