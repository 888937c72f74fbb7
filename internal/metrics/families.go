package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// roleLabel is the label every Kueue metric (except build info) carries,
// always as its last label.
const roleLabel = "replica_role"

// kind is the Prometheus type of a family.
type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindHistogram
)

// scope says which kind of object a family describes, so that deleting an
// object can find the series that belong to it.
type scope int

const (
	scopeGlobal scope = iota
	scopeClusterQueue
	scopeLocalQueue
	scopeCohort
)

// family is one metric vector plus what the package needs to know about it
// beyond what client_golang keeps: its type, scope and label names.
type family struct {
	name   string
	kind   kind
	scope  scope
	labels []string
	vec    *prometheus.MetricVec
	col    prometheus.Collector
	// unexported families are defined and recorded but never registered
	// (Kueue does the same with kueue_replaced_workload_slices_total).
	unexported bool
}

// hasLabel reports whether the family has a label called name.
func (f *family) hasLabel(name string) bool {
	for _, l := range f.labels {
		if l == name {
			return true
		}
	}
	return false
}

// builder creates metric vectors and remembers them as families.
type builder struct {
	families []*family
}

// withRole appends the replica role label to labels.
func withRole(labels []string) []string {
	out := make([]string, 0, len(labels)+1)
	out = append(out, labels...)
	return append(out, roleLabel)
}

func (b *builder) add(f *family) {
	b.families = append(b.families, f)
}

// counter defines a counter vector whose labels are labels + replica_role.
func (b *builder) counter(name, help string, sc scope, labels ...string) *prometheus.CounterVec {
	all := withRole(labels)
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, all)
	b.add(&family{name: name, kind: kindCounter, scope: sc, labels: all, vec: v.MetricVec, col: v})
	return v
}

// gauge defines a gauge vector whose labels are labels + replica_role.
func (b *builder) gauge(name, help string, sc scope, labels ...string) *prometheus.GaugeVec {
	all := withRole(labels)
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, all)
	b.add(&family{name: name, kind: kindGauge, scope: sc, labels: all, vec: v.MetricVec, col: v})
	return v
}

// histogram defines a histogram vector whose labels are labels +
// replica_role. Nil buckets means the Prometheus default buckets.
func (b *builder) histogram(name, help string, buckets []float64, sc scope, labels ...string) *prometheus.HistogramVec {
	all := withRole(labels)
	opts := prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}
	v := prometheus.NewHistogramVec(opts, all)
	b.add(&family{name: name, kind: kindHistogram, scope: sc, labels: all, vec: v.MetricVec, col: v})
	return v
}

// waitBuckets are Kueue's latency buckets: 1s, then 2.5s doubling, count
// bounds in all (14 reaches 10240s, about 2.8h; 16 reaches 40960s).
func waitBuckets(count int) []float64 {
	return append([]float64{1}, prometheus.ExponentialBuckets(2.5, 2, count-1)...)
}

// creationBuckets are the workload creation latency buckets: 10ms
// doubling, 11 bounds (up to 10.24s).
func creationBuckets() []float64 {
	return prometheus.ExponentialBuckets(0.01, 2, 11)
}
