package jobframework

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Pod counts per PodSet, as an elastic job's slices compare them.
type counts = map[kueue.PodSetReference]int32

// podCounts are the job's counts now.
func podCounts(job Job) (counts, error) {
	podSets, err := job.PodSets()
	if err != nil {
		return nil, err
	}
	out := make(counts, len(podSets))
	for _, ps := range podSets {
		out[ps.Name] = ps.Count
	}
	return out, nil
}

// specCounts are a Workload's counts.
func specCounts(wl *kueue.Workload) counts {
	out := make(counts, len(wl.Spec.PodSets))
	for _, ps := range wl.Spec.PodSets {
		out[ps.Name] = ps.Count
	}
	return out
}

// admittedCounts are the counts a reserved Workload holds quota for.
func admittedCounts(wl *kueue.Workload) counts {
	out := specCounts(wl)
	if wl.Status.Admission == nil {
		return out
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if psa.Count != nil {
			out[psa.Name] = *psa.Count
		}
	}
	return out
}

// sameNames reports whether two count sets name the same PodSets.
func sameNames(a, b counts) bool {
	if len(a) != len(b) {
		return false
	}
	for name := range a {
		if _, ok := b[name]; !ok {
			return false
		}
	}
	return true
}

// grows reports whether want has more pods than have in some PodSet.
func grows(want, have counts) bool {
	for name, n := range want {
		if n > have[name] {
			return true
		}
	}
	return false
}

// equalCounts reports equal counts for the same PodSets.
func equalCounts(a, b counts) bool {
	if !sameNames(a, b) {
		return false
	}
	for name, n := range a {
		if b[name] != n {
			return false
		}
	}
	return true
}
