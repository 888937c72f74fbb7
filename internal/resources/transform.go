package resources

import corev1 "k8s.io/api/core/v1"

// Transformation rewrites one requested resource into others before
// quota is checked (the Configuration's resources.transformations): each
// whole unit of Input (rounded up; times the whole units of MultiplyBy
// when the pod requests it) adds Outputs (amounts per unit), and Input
// itself stays unless Replace.
type Transformation struct {
	Input      corev1.ResourceName
	Replace    bool
	MultiplyBy corev1.ResourceName
	Outputs    Requests
}

// Transform applies the transformations to one pod's requests, returning
// new requests (r itself when no transformation applies). Outputs of
// several inputs, and an output that is also requested, add up. Amounts
// clamp at Max, which fits no quota.
func Transform(r Requests, ts []Transformation) Requests {
	if len(ts) == 0 {
		return r
	}
	byInput := make(map[corev1.ResourceName]*Transformation, len(ts))
	for i := range ts {
		if _, ok := r[ts[i].Input]; ok {
			byInput[ts[i].Input] = &ts[i]
		}
	}
	if len(byInput) == 0 {
		return r
	}
	out := make(Requests, len(r))
	for name, a := range r {
		t, ok := byInput[name]
		if !ok {
			out[name] = Add(out[name], a)
			continue
		}
		if t.MultiplyBy != "" {
			if m, ok := r[t.MultiplyBy]; ok {
				a = Mul(a, units(t.MultiplyBy, m))
			}
		}
		for o, perUnit := range t.Outputs {
			out[o] = Add(out[o], Mul(perUnit, units(name, a)))
		}
		if !t.Replace {
			out[name] = Add(out[name], a)
		}
	}
	return out
}

// units is the number of whole units of the resource in a (rounded up),
// at least 0.
func units(name corev1.ResourceName, a Amount) int64 {
	if a <= 0 {
		return 0
	}
	u := Unit(name)
	return a/u + min(1, a%u)
}
