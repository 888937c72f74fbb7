package validation

import (
	"cmp"
	"math/big"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kuota-dev/kuota/internal/resources"
)

// maxQuantityDigits bounds the integer digits of a quantity in a spec:
// 1e31 and more is refused (values between 1e30 and 1e31 may pass).
// Nothing real comes near 10^30 of anything; the bound exists because
// comparing a quantity like "1e999999999" with an ordinary one takes
// apimachinery minutes and gigabytes, and Kuota's accounting compares every
// quantity it reads.
const maxQuantityDigits = 31

// decimalDigits estimates the number of digits of the integer part of |q|
// (negative for values below 0.1). The estimate is off by at most one.
func decimalDigits(q resource.Quantity) int64 {
	d := q.AsDec()
	unscaled := int64(d.UnscaledBig().BitLen()) * 30103 / 100000
	return unscaled + 1 - int64(d.Scale())
}

// validateMagnitude refuses quantities too large to be accounted.
func validateMagnitude(q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() != 0 && decimalDigits(q) > maxQuantityDigits {
		return field.ErrorList{field.Invalid(path, q.String(), "is too large: quantities of 1e31 or more cannot be accounted")}
	}
	return nil
}

// validateAmount refuses an amount of a resource (a quota, a limit, a
// request) that Kuota's accounting cannot hold: beyond
// resources.MaxAmount in the resource's unit (4Ei of memory, about 4.6e15
// cpus). The magnitude check runs first, so that nothing expands an
// extreme exponent.
func validateAmount(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	if errs := validateMagnitude(q, path); len(errs) > 0 {
		return errs
	}
	if _, err := resources.FromQuantity(name, q); err != nil {
		return field.ErrorList{field.Invalid(path, q.String(), err.Error())}
	}
	return nil
}

// compareQuantities orders quantities like Quantity.Cmp. Values whose
// magnitudes are clearly apart are ordered without rescaling one to the
// other's scale, which is what makes Cmp slow on extreme exponents.
func compareQuantities(a, b resource.Quantity) int {
	sa, sb := a.Sign(), b.Sign()
	if sa != sb || sa == 0 {
		return cmp.Compare(sa, sb)
	}
	da, db := decimalDigits(a), decimalDigits(b)
	switch {
	case da > db+2:
		return sa
	case db > da+2:
		return -sa
	}
	return a.Cmp(b)
}

// divisibleBy reports whether q is n times an amount of the same precision
// as q, and at least milli precision. It works modulo n, so the size of the
// exponent does not matter.
func divisibleBy(q resource.Quantity, n int64) bool {
	d := q.AsDec()
	mod := big.NewInt(n)
	v := new(big.Int).Mod(d.UnscaledBig(), mod)
	if scale := int64(d.Scale()); scale < 3 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(3-scale), mod))
	}
	return v.Mod(v, mod).Sign() == 0
}
