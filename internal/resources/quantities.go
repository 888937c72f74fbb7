package resources

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Requests holds amounts per resource name, such as the requests of a pod or
// of a whole PodSet.
type Requests map[corev1.ResourceName]Amount

// Clone returns a copy.
func (r Requests) Clone() Requests { return maps.Clone(r) }

// Add adds other into r.
func (r Requests) Add(other Requests) {
	for name, a := range other {
		r[name] = Add(r[name], a)
	}
}

// Max raises each amount of r to at least the amount in other.
func (r Requests) Max(other Requests) {
	for name, a := range other {
		if cur, ok := r[name]; !ok || a > cur {
			r[name] = a
		}
	}
}

// Scaled returns r multiplied by n.
func (r Requests) Scaled(n int64) Requests {
	out := make(Requests, len(r))
	for name, a := range r {
		out[name] = Mul(a, n)
	}
	return out
}

// Check fails when an amount of r is more than can be counted (not
// Countable), naming the first such resource in name order.
func (r Requests) Check() error {
	for _, a := range r {
		if !Countable(a) {
			return tooMuch(r)
		}
	}
	return nil
}

func tooMuch(r Requests) error {
	for _, name := range r.Names() {
		if !Countable(r[name]) {
			limit := ToQuantity(name, MaxAmount)
			return fmt.Errorf("requests more %s than Kuota can count (at most %s)", name, limit.String())
		}
	}
	return nil
}

// Names returns the resource names in a stable (sorted) order.
func (r Requests) Names() []corev1.ResourceName {
	return slices.Sorted(maps.Keys(r))
}

// ToResourceList converts to a ResourceList.
func (r Requests) ToResourceList() corev1.ResourceList {
	out := make(corev1.ResourceList, len(r))
	for name, a := range r {
		out[name] = ToQuantity(name, a)
	}
	return out
}

// FromResourceList converts a ResourceList. When a quantity cannot be
// counted it fails, naming the first such resource in name order, and
// that resource is ±Max in the result: more than any quota, so it never
// fits.
func FromResourceList(list corev1.ResourceList) (Requests, error) {
	out := make(Requests, len(list))
	failed := false
	for name, q := range list {
		a, err := FromQuantity(name, q)
		if err != nil {
			failed = true
			a = Max
			if q.Sign() < 0 {
				a = -Max
			}
		}
		out[name] = a
	}
	if failed {
		return out, firstRangeError(list)
	}
	return out, nil
}

// firstRangeError returns the error of the first quantity, in name order,
// that cannot be counted, so that messages do not depend on map order.
func firstRangeError(list corev1.ResourceList) error {
	for _, name := range slices.Sorted(maps.Keys(list)) {
		if _, err := FromQuantity(name, list[name]); err != nil {
			return err
		}
	}
	return nil
}

// FlavorResourceQuantities holds amounts per (flavor, resource).
type FlavorResourceQuantities map[FlavorResource]Amount

// Clone returns a copy.
func (q FlavorResourceQuantities) Clone() FlavorResourceQuantities { return maps.Clone(q) }

// Add adds other into q.
func (q FlavorResourceQuantities) Add(other FlavorResourceQuantities) {
	for fr, a := range other {
		q[fr] = Add(q[fr], a)
	}
}

// Sub subtracts other from q, dropping entries that reach zero.
func (q FlavorResourceQuantities) Sub(other FlavorResourceQuantities) {
	for fr, a := range other {
		v := Sub(q[fr], a)
		if v == 0 {
			delete(q, fr)
		} else {
			q[fr] = v
		}
	}
}

// Keys returns the pairs in a stable order: by flavor, then resource.
func (q FlavorResourceQuantities) Keys() []FlavorResource {
	return slices.SortedFunc(maps.Keys(q), CompareFlavorResource)
}

// CompareFlavorResource orders pairs by flavor, then resource.
func CompareFlavorResource(a, b FlavorResource) int {
	if c := cmp.Compare(a.Flavor, b.Flavor); c != 0 {
		return c
	}
	return cmp.Compare(a.Resource, b.Resource)
}
