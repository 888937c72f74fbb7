// Package resources does Kuota's quota arithmetic: amounts in integer
// milli-units keyed by (flavor, resource), and the effective requests of pods
// as Kubernetes computes them. It is pure: no I/O, no globals.
package resources

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Amount is a quantity of a resource in milli-units: 1 cpu is 1000, 1 byte
// of memory is 1000, one pod is 1000. Arithmetic saturates at Unlimited.
type Amount = int64

// Unlimited stands for "no limit" (an unset borrowing limit, say). Adding to
// it or subtracting a finite amount from it keeps it Unlimited.
const Unlimited Amount = math.MaxInt64

// One is the amount of one unit (one pod, one GPU) in milli-units.
const One Amount = 1000

var (
	maxMilli = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	minMilli = resource.NewMilliQuantity(-math.MaxInt64, resource.DecimalSI)
)

// FromQuantity converts a quantity to milli-units, rounding fractions of a
// milli-unit up and saturating at Unlimited (and -Unlimited).
func FromQuantity(q resource.Quantity) Amount {
	if q.Cmp(*maxMilli) >= 0 {
		return Unlimited
	}
	if q.Cmp(*minMilli) <= 0 {
		return -Unlimited
	}
	return q.MilliValue()
}

// ToQuantity converts milli-units back to a quantity in the canonical format
// of the resource (decimal SI for cpu-like resources, binary SI for memory).
func ToQuantity(name corev1.ResourceName, a Amount) resource.Quantity {
	if a%1000 == 0 {
		format := resource.DecimalSI
		if isBinary(name) {
			format = resource.BinarySI
		}
		return *resource.NewQuantity(a/1000, format)
	}
	return *resource.NewMilliQuantity(a, resource.DecimalSI)
}

func isBinary(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		return true
	}
	return len(name) > 9 && string(name[:9]) == "hugepages"
}

// Add returns a+b, saturating at Unlimited.
func Add(a, b Amount) Amount {
	if a == Unlimited || b == Unlimited {
		return Unlimited
	}
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return Unlimited
	}
	if a < 0 && b < 0 && s >= 0 {
		return -Unlimited
	}
	return s
}

// Sub returns a-b. Unlimited minus a finite amount stays Unlimited.
func Sub(a, b Amount) Amount {
	if a == Unlimited && b != Unlimited {
		return Unlimited
	}
	if b == Unlimited {
		if a == Unlimited {
			return 0
		}
		return -Unlimited
	}
	return Add(a, -b)
}

// Mul returns a*n for a count n >= 0, saturating at Unlimited.
func Mul(a Amount, n int64) Amount {
	if a == 0 || n == 0 {
		return 0
	}
	if a == Unlimited {
		return Unlimited
	}
	p := a * n
	if p/n != a {
		if (a > 0) == (n > 0) {
			return Unlimited
		}
		return -Unlimited
	}
	return p
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
