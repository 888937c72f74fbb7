package summary

// ReplayCheck sets the run's figures beside the simulator's replay of it
// (the run's own arrivals under the latency model fitted from it, over
// several seeds): how far the simulator explains what the manager did.
type ReplayCheck struct {
	Seeds int `json:"seeds"`
	// SimulatedMeanSeconds is the replay's mean time to admission, averaged
	// over seeds, beside the run's MeanObservedTimeToAdmission.
	SimulatedMeanSeconds float64 `json:"simulatedMeanSeconds"`
	// SimulatedEvictions is the mean over seeds; Min and Max the range.
	SimulatedEvictions    float64 `json:"simulatedEvictions"`
	SimulatedEvictionsMin int     `json:"simulatedEvictionsMin"`
	SimulatedEvictionsMax int     `json:"simulatedEvictionsMax"`
}

// MeanObservedTimeToAdmission is the mean time to admission over every
// admitted workload, as the harness observed it.
func (s *Summary) MeanObservedTimeToAdmission() float64 {
	var sum float64
	n := 0
	for _, c := range s.TimeToAdmission {
		sum += c.Observed.Mean * float64(c.Count)
		n += c.Count
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
