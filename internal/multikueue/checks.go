package multikueue

import (
	"fmt"
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Reasons of a MultiKueue check's Active condition.
const (
	ReasonActive             = "Active"
	ReasonBadConfig          = "BadConfig"
	ReasonSomeActiveClusters = "SomeActiveClusters"
	ReasonNoUsableClusters   = "NoUsableClusters"
)

// Activity is a check's Active condition.
type Activity struct {
	Active  bool
	Reason  string
	Message string
}

// ConfigName returns the name of the MultiKueueConfig the check's
// parameters name, or an error saying what is wrong with them.
func ConfigName(ac *kueue.AdmissionCheck) (string, error) {
	p := ac.Spec.Parameters
	if p == nil {
		return "", fmt.Errorf("spec.parameters must name a %s MultiKueueConfig", kueue.GroupVersion.Group)
	}
	if p.APIGroup != kueue.GroupVersion.Group || !strings.EqualFold(p.Kind, "MultiKueueConfig") {
		return "", fmt.Errorf("spec.parameters names %s %s; a MultiKueue check needs a %s MultiKueueConfig", p.APIGroup, p.Kind, kueue.GroupVersion.Group)
	}
	return p.Name, nil
}

// CheckActivity says whether a MultiKueue check is active: it names an
// existing MultiKueueConfig (cfg, nil when missing) of which at least one
// cluster is connected (active holds the connected clusters).
func CheckActivity(ac *kueue.AdmissionCheck, cfg *kueue.MultiKueueConfig, active map[string]bool) Activity {
	name, err := ConfigName(ac)
	if err != nil {
		return Activity{Reason: ReasonBadConfig, Message: err.Error()}
	}
	if cfg == nil {
		return Activity{Reason: ReasonBadConfig, Message: fmt.Sprintf("MultiKueueConfig %q not found", name)}
	}
	var down []string
	for _, c := range cfg.Spec.Clusters {
		if !active[c] {
			down = append(down, c)
		}
	}
	switch {
	case len(down) == len(cfg.Spec.Clusters):
		return Activity{Reason: ReasonNoUsableClusters, Message: fmt.Sprintf("No worker cluster of MultiKueueConfig %q is connected: %s", name, strings.Join(down, ", "))}
	case len(down) > 0:
		slices.Sort(down)
		return Activity{Active: true, Reason: ReasonSomeActiveClusters, Message: fmt.Sprintf("Worker clusters not connected: %s", strings.Join(down, ", "))}
	}
	return Activity{Active: true, Reason: ReasonActive, Message: "The check is active"}
}

// Usable lists the config's connected clusters, in the config's order.
func Usable(cfg *kueue.MultiKueueConfig, active map[string]bool) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	for _, c := range cfg.Spec.Clusters {
		if active[c] {
			out = append(out, c)
		}
	}
	return out
}
