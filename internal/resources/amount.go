// Package resources does Kuota's quota arithmetic: integer amounts keyed by
// (flavor, resource), and the effective requests of pods as Kubernetes
// computes them. It is pure: no I/O, no globals.
//
// # Units
//
// An Amount counts one resource in that resource's unit (Unit): cpu in
// milli-cores, every other resource (memory, storage and hugepages in bytes,
// pods, GPUs and extended resources in devices) in whole base units, so
// that bytes get the full int64 range. Kubernetes itself only allows
// fractions of cpu in pod requests; a fraction of any other resource (in a
// quota, say) is rounded up to the next whole unit, as Quantity.Value does.
// FromQuantity and ToQuantity are the only conversions between quantities
// and amounts.
//
// # Range
//
// A quantity whose amount is beyond MaxAmount (2^62: 4Ei bytes, about
// 4.6e15 cores) is refused by FromQuantity, so amounts read from objects
// never approach the int64 limit and the sum of two of them always fits.
// Add, Sub and Mul clamp results at ±Max, a finite bound above MaxAmount:
// a clamped value means "more than can be counted" and exceeds every
// quota, which is at most MaxAmount. Unlimited, the one value above Max,
// stands only for "no limit" (an unset borrowing or lending limit); no
// arithmetic on finite amounts ever produces it.
package resources

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Amount is a quantity of one resource in the resource's Unit.
type Amount = int64

// Unlimited stands for "no limit" (an unset borrowing limit, say). Adding to
// it or subtracting a finite amount from it keeps it Unlimited; finite
// arithmetic never produces it.
const Unlimited Amount = math.MaxInt64

// Max is the bound at which Add, Sub and Mul clamp finite results: a value
// of Max means "more than can be counted". It is finite and distinct from
// Unlimited.
const Max Amount = math.MaxInt64 - 1

// MaxAmount is the largest amount FromQuantity accepts, in either sign:
// 2^62 units, so that the sum of any two accepted amounts fits an int64.
const MaxAmount Amount = 1 << 62

// One is one cpu in milli-units, and a fair-sharing weight of 1 (weights
// are counted in milli-units too). One unit of any other resource is 1
// (Unit).
const One Amount = 1000

// Unit returns the amount that makes one whole unit of the resource: 1000
// for cpu, counted in milli-cores, and 1 for every other resource, counted
// in its base unit (bytes, pods, devices).
func Unit(name corev1.ResourceName) Amount {
	if name == corev1.ResourceCPU {
		return One
	}
	return 1
}

// RangeError reports a quantity that cannot be counted: its amount is
// beyond MaxAmount.
type RangeError struct {
	Resource corev1.ResourceName
	Quantity string
}

func (e *RangeError) Error() string {
	limit := ToQuantity(e.Resource, MaxAmount)
	return fmt.Sprintf("%s of %s is more than Kuota can count (at most %s)", e.Quantity, e.Resource, limit.String())
}

// FromQuantity converts a quantity of the resource to an amount in its
// Unit, rounding fractions of a unit up. It fails with a *RangeError when
// the amount is beyond MaxAmount in either sign. Quantities with extreme
// exponents are refused without being expanded.
func FromQuantity(name corev1.ResourceName, q resource.Quantity) (Amount, error) {
	unit := Unit(name)
	if v, ok := q.AsInt64(); ok && v <= MaxAmount/unit && v >= -MaxAmount/unit {
		return v * unit, nil
	}
	a, ok := exactAmount(q, unit)
	if !ok {
		return 0, &RangeError{Resource: name, Quantity: q.String()}
	}
	return a, nil
}

// exactAmount computes ceil(q x unit) exactly, reporting false when it is
// beyond MaxAmount.
func exactAmount(q resource.Quantity, unit Amount) (Amount, bool) {
	d := q.AsDec()
	unscaled := d.UnscaledBig()
	if unscaled.Sign() == 0 {
		return 0, true
	}
	// q = unscaled x 10^-scale; its integer part has about this many
	// digits (off by at most one), computed without expanding the power.
	scale := int64(d.Scale())
	digits := int64(unscaled.BitLen())*30103/100000 + 1 - scale
	switch {
	case digits > 22:
		return 0, false
	case digits < -6:
		// |q x unit| < 1: rounds up to 1, or to 0 when negative.
		if unscaled.Sign() > 0 {
			return 1, true
		}
		return 0, true
	}
	v := new(big.Int).Mul(unscaled, big.NewInt(unit))
	if scale <= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(-scale), nil))
	} else {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil)
		var rem big.Int
		v.QuoRem(v, div, &rem)
		if rem.Sign() > 0 {
			v.Add(v, big.NewInt(1))
		}
	}
	if !v.IsInt64() || v.Int64() > MaxAmount || v.Int64() < -MaxAmount {
		return 0, false
	}
	return v.Int64(), true
}

// ToQuantity converts an amount of the resource back to a quantity in the
// resource's canonical format: binary SI for memory, storage and
// hugepages, decimal SI otherwise (cpu in milli-cores when it is not a
// whole number of cores).
func ToQuantity(name corev1.ResourceName, a Amount) resource.Quantity {
	if name == corev1.ResourceCPU {
		if a%One == 0 {
			return *resource.NewQuantity(a/One, resource.DecimalSI)
		}
		return *resource.NewMilliQuantity(a, resource.DecimalSI)
	}
	format := resource.DecimalSI
	if isBinary(name) {
		format = resource.BinarySI
	}
	return *resource.NewQuantity(a, format)
}

// Format renders an amount of the resource for messages: as a quantity,
// "unlimited" for Unlimited, and "more than <MaxAmount>" for an amount
// beyond what can be counted (a clamped sum).
func Format(name corev1.ResourceName, a Amount) string {
	switch {
	case a == Unlimited:
		return "unlimited"
	case !Countable(a):
		limit := ToQuantity(name, MaxAmount)
		if a < 0 {
			return "less than -" + limit.String()
		}
		return "more than " + limit.String()
	}
	q := ToQuantity(name, a)
	return q.String()
}

func isBinary(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		return true
	}
	return len(name) > 9 && string(name[:9]) == "hugepages"
}

// Countable reports whether a is within ±MaxAmount: an amount a quantity
// could have. A sum or product that is not countable was clamped or is too
// large to be admitted.
func Countable(a Amount) bool { return a <= MaxAmount && a >= -MaxAmount }

// Add returns a+b, clamped at ±Max. Unlimited plus anything is Unlimited.
func Add(a, b Amount) Amount {
	if a == Unlimited || b == Unlimited {
		return Unlimited
	}
	s := a + b
	switch {
	case a > 0 && b > 0 && (s < 0 || s > Max):
		return Max
	case a < 0 && b < 0 && (s >= 0 || s < -Max):
		return -Max
	}
	return s
}

// Sub returns a-b, clamped at ±Max. Unlimited minus a finite amount stays
// Unlimited; a finite amount minus Unlimited is -Max.
func Sub(a, b Amount) Amount {
	switch {
	case a == Unlimited && b == Unlimited:
		return 0
	case a == Unlimited:
		return Unlimited
	case b == Unlimited:
		return -Max
	}
	return Add(a, -b)
}

// Mul returns a*n, clamped at ±Max. Unlimited times a positive count is
// Unlimited.
func Mul(a Amount, n int64) Amount {
	if a == 0 || n == 0 {
		return 0
	}
	if a == Unlimited && n > 0 {
		return Unlimited
	}
	negative := (a < 0) != (n < 0)
	hi, lo := bits.Mul64(magnitude(a), magnitude(n))
	switch {
	case hi != 0 || lo > uint64(Max):
		if negative {
			return -Max
		}
		return Max
	case negative:
		return -int64(lo)
	}
	return int64(lo)
}

// magnitude is |v|, exact for every int64.
func magnitude(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// FlavorResource names one resource in one flavor: the unit of quota.
type FlavorResource struct {
	Flavor   kueue.ResourceFlavorReference
	Resource corev1.ResourceName
}

// String renders the pair as "flavor/resource".
func (fr FlavorResource) String() string {
	return string(fr.Flavor) + "/" + string(fr.Resource)
}
