// Package afs is admission fair sharing: within a ClusterQueue whose
// admissionScope asks for it, the workloads of the LocalQueue that used
// the least (its usage decayed over time, divided by its weight) go first,
// before priority. It holds the arithmetic (decay, entry penalties,
// scores) and the order; the cache keeps one Ledger per LocalQueue and
// the status writer publishes it. The package is pure: no I/O, no clock.
package afs

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Params are the Configuration's admissionFairSharing settings.
type Params struct {
	// HalfLife is how long until recorded usage counts half; zero forgets
	// it at each sample.
	HalfLife time.Duration
	// Interval is how often usage is sampled.
	Interval time.Duration
	// Weights weigh each resource in a score; a resource not listed
	// weighs 1.
	Weights map[corev1.ResourceName]float64
}

// Amounts are quantities per resource, in units (1 = one cpu, one byte).
type Amounts map[corev1.ResourceName]float64

// keep is the share of old usage that remains after elapsed: 0.5 per
// half-life; nothing with a zero half-life.
func (p *Params) keep(elapsed time.Duration) float64 {
	if p.HalfLife <= 0 {
		return 0
	}
	return math.Pow(0.5, float64(max(elapsed, 0))/float64(p.HalfLife))
}

// PenaltyRate is the share of an admitted workload's requests added at
// once to its LocalQueue's usage: what one sample of it would add, so that
// a burst of admissions from one LocalQueue counts before the next sample.
func (p *Params) PenaltyRate() float64 { return 1 - p.keep(p.Interval) }

// weight is a resource's weight in a score.
func (p *Params) weight(r corev1.ResourceName) float64 {
	if w, ok := p.Weights[r]; ok {
		return w
	}
	return 1
}

// Score sums amounts weighed per resource and divides by the LocalQueue's
// weight; a weight of zero or less makes it +Inf (the LocalQueue goes
// last), unless there is nothing to count.
func (p *Params) Score(a Amounts, lqWeight float64) float64 {
	var s float64
	for r, v := range a {
		s += p.weight(r) * v
	}
	if lqWeight <= 0 {
		if s == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return s / lqWeight
}

// Ledger is one LocalQueue's record: its decayed usage as of the last
// sample, and the entry penalties of what it admitted since.
type Ledger struct {
	Consumed Amounts
	Penalty  Amounts
	// LastUpdate (Unix nanoseconds) is the last sample; 0 before the first.
	LastUpdate int64
}

// Total is the usage scores are computed on: decayed usage plus penalties.
func (l *Ledger) Total() Amounts {
	out := make(Amounts, len(l.Consumed)+len(l.Penalty))
	for r, v := range l.Consumed {
		out[r] += v
	}
	for r, v := range l.Penalty {
		out[r] += v
	}
	return out
}

// AddPenalty charges a LocalQueue for an admission of the given requests
// (sign 1), or takes the charge back for an admission that did not happen
// (sign -1, its write failed); what a sample already dropped stays dropped.
func (p *Params) AddPenalty(l *Ledger, requests Amounts, sign float64) {
	rate := sign * p.PenaltyRate()
	if l.Penalty == nil {
		l.Penalty = Amounts{}
	}
	for r, v := range requests {
		if left := l.Penalty[r] + rate*v; left > 1e-9 {
			l.Penalty[r] = left
		} else {
			delete(l.Penalty, r)
		}
	}
}

// Due reports whether a sample is due at now.
func (p *Params) Due(l *Ledger, now int64) bool {
	return l.LastUpdate == 0 || now-l.LastUpdate >= int64(p.Interval)
}

// Sample folds current (what the LocalQueue holds now) into its usage at
// now: the old usage decays for the time since the last sample and
// current makes up the rest, so a LocalQueue holding the same amount for
// long enough converges to it. Penalties are dropped: what they stood for
// is in current now. The first sample of a LocalQueue starts from nothing.
// With a zero half-life nothing is remembered: usage is reset to nothing.
func (p *Params) Sample(l *Ledger, current Amounts, now int64) {
	if p.HalfLife <= 0 {
		l.Consumed, l.Penalty, l.LastUpdate = Amounts{}, nil, now
		return
	}
	k := 0.0
	if l.LastUpdate != 0 {
		k = p.keep(time.Duration(now - l.LastUpdate))
	} else {
		k = p.keep(p.Interval)
	}
	next := Amounts{}
	for r, v := range l.Consumed {
		next[r] += k * v
	}
	for r, v := range current {
		next[r] += (1 - k) * v
	}
	for r, v := range next {
		if v < 1e-9 {
			delete(next, r)
		}
	}
	l.Consumed, l.Penalty, l.LastUpdate = next, nil, now
}
