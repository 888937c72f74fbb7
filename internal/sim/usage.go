package sim

import (
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/plots"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// usageMeter integrates, per class of ClusterQueues, the quota reserved
// over time against the class's nominal quota: what the ClusterQueues'
// status would show, averaged over the run.
type usageMeter struct {
	classOf map[kueue.ClusterQueueReference]string
	// quotas are the (flavor, resource) pairs each queue has nominal
	// quota for; usage elsewhere (pods, say) is not counted.
	quotas  map[kueue.ClusterQueueReference]map[resources.FlavorResource]bool
	classes map[string]*classUsage
	order   []string
	last    time.Duration
}

type classUsage struct {
	queues  int
	nominal int64 // amounts (resources.Unit) summed over the class's queues
	level   int64 // amounts reserved now
	area    float64
	// points are the level's changes: seconds, percent of nominal.
	points []plots.Point
}

func newUsageMeter() *usageMeter {
	return &usageMeter{classOf: map[kueue.ClusterQueueReference]string{},
		quotas: map[kueue.ClusterQueueReference]map[resources.FlavorResource]bool{}, classes: map[string]*classUsage{}}
}

func (m *usageMeter) addQueue(cq *state.ClusterQueue, class string) {
	m.classOf[cq.Name] = class
	c := m.classes[class]
	if c == nil {
		c = &classUsage{}
		m.classes[class] = c
		m.order = append(m.order, class)
	}
	c.queues++
	frs := map[resources.FlavorResource]bool{}
	for fr, q := range cq.Quotas {
		if q.Nominal > 0 {
			frs[fr] = true
			c.nominal += q.Nominal
		}
	}
	m.quotas[cq.Name] = frs
}

// advance integrates the current levels up to t.
func (m *usageMeter) advance(t time.Duration) {
	if dt := (t - m.last).Seconds(); dt > 0 {
		for _, c := range m.classes {
			c.area += float64(c.level) * dt
		}
	}
	m.last = max(m.last, t)
}

func (m *usageMeter) add(cq kueue.ClusterQueueReference, u resources.FlavorResourceQuantities) {
	m.change(cq, u, 1)
}

func (m *usageMeter) remove(cq kueue.ClusterQueueReference, u resources.FlavorResourceQuantities) {
	m.change(cq, u, -1)
}

func (m *usageMeter) change(cq kueue.ClusterQueueReference, u resources.FlavorResourceQuantities, sign int64) {
	c := m.classes[m.classOf[cq]]
	if c == nil {
		return
	}
	for fr, v := range u {
		if m.quotas[cq][fr] {
			c.level += sign * v
		}
	}
	if c.nominal > 0 {
		pt := plots.Point{T: m.last.Seconds(), V: 100 * float64(c.level) / float64(c.nominal)}
		if n := len(c.points); n > 0 && c.points[n-1].T == pt.T {
			c.points[n-1] = pt
		} else {
			c.points = append(c.points, pt)
		}
	}
}

// series returns each class's usage over time, at most n points each.
func (m *usageMeter) series(n int) []plots.Series {
	out := make([]plots.Series, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, plots.Series{Name: name, Points: plots.Downsample(m.classes[name].points, n)})
	}
	return out
}

// ClassUsage is the average use of a class of ClusterQueues' nominal
// quota over a run, in percent.
type ClassUsage struct {
	Class        string  `json:"class"`
	Queues       int     `json:"queues"`
	UsagePercent float64 `json:"usagePercent"`
}

// figures returns each class's usage over [0, end].
func (m *usageMeter) figures(end time.Duration) []ClassUsage {
	out := make([]ClassUsage, 0, len(m.order))
	for _, name := range m.order {
		c := m.classes[name]
		u := ClassUsage{Class: name, Queues: c.queues}
		if capacity := float64(c.nominal) * end.Seconds(); capacity > 0 {
			u.UsagePercent = 100 * c.area / capacity
		}
		out = append(out, u)
	}
	return out
}
