package resources

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The reference below is exact arithmetic on math/big integers, written
// from the package comment's rules, not from the code: amounts are the
// quantity times Unit, rounded up; beyond ±MaxAmount nothing is counted;
// sums and products are exact and then clamped at ±Max; Unlimited only
// comes from Unlimited.

var (
	refMaxAmount = new(big.Int).Lsh(big.NewInt(1), 62)
	refMax       = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 63), big.NewInt(2))
)

// refClamp bounds v to ±Max.
func refClamp(v *big.Int) Amount {
	switch {
	case v.Cmp(refMax) > 0:
		return Max
	case v.Cmp(new(big.Int).Neg(refMax)) < 0:
		return -Max
	}
	return v.Int64()
}

// refAmount is ceil(mantissa x 10^exp x unit) as a big integer.
func refAmount(mantissa int64, exp int, unit Amount) *big.Int {
	r := new(big.Rat).SetInt64(mantissa)
	ten := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil))
	if exp >= 0 {
		r.Mul(r, ten)
	} else {
		r.Quo(r, ten)
	}
	r.Mul(r, new(big.Rat).SetInt64(unit))
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

var fuzzNames = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, "nvidia.com/gpu", corev1.ResourceEphemeralStorage}

// checkFromQuantity compares FromQuantity on mantissa x 10^exp with the
// reference, and checks that ToQuantity gives back at least the quantity
// and less than one unit more.
func checkFromQuantity(t *testing.T, name corev1.ResourceName, mantissa int64, exp int) {
	t.Helper()
	s := fmt.Sprintf("%de%d", mantissa, exp)
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return // apimachinery refuses some spellings (too many digits): nothing to convert
	}
	want := refAmount(mantissa, exp, Unit(name))
	got, err := FromQuantity(name, q)
	countable := want.CmpAbs(refMaxAmount) <= 0
	switch {
	case countable && (err != nil || big.NewInt(got).Cmp(want) != 0):
		t.Fatalf("FromQuantity(%s, %s) = %d, %v; want %s", name, s, got, err, want)
	case !countable && err == nil:
		t.Fatalf("FromQuantity(%s, %s) = %d; want a RangeError (exact %s)", name, s, got, want)
	case !countable:
		return
	}
	back := ToQuantity(name, got)
	if back.Cmp(q) < 0 {
		t.Fatalf("ToQuantity(%s, %d) = %s, below %s", name, got, back.String(), s)
	}
	unit := ToQuantity(name, Unit(name))
	q.Add(unit)
	if back.Cmp(q) >= 0 {
		t.Fatalf("ToQuantity(%s, %d) = %s, a unit or more above %s", name, got, back.String(), s)
	}
}

func FuzzFromQuantity(f *testing.F) {
	for _, seed := range []struct {
		m int64
		e int
	}{{5, 15}, {4611686018427387904, 0}, {4611686018427387905, 0}, {4611686018427387904, -3}, {1, -9}, {-3, 18}, {9223372036854775807, 0}, {15, -1}, {1, 30}} {
		for i := range fuzzNames {
			f.Add(seed.m, seed.e, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, mantissa int64, exp int, name uint8) {
		if exp < -40 || exp > 40 {
			return
		}
		checkFromQuantity(t, fuzzNames[int(name)%len(fuzzNames)], mantissa, exp)
	})
}

// TestFromQuantityNearTheLimits runs the fuzz check on quantities drawn
// around 2^62 and 2^63, in every unit, and on binary suffixes.
func TestFromQuantityNearTheLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 62))
	for i := 0; i < 20000; i++ {
		name := fuzzNames[rng.IntN(len(fuzzNames))]
		base := int64(MaxAmount)
		if rng.IntN(2) == 0 {
			base = math.MaxInt64
		}
		exp := 0
		if name == corev1.ResourceCPU {
			exp = -3 // so that the amount, in milli-units, is near the limit
		}
		mantissa := base - int64(rng.IntN(3000)) + 1500
		if mantissa < 0 {
			mantissa = math.MaxInt64 // wrapped
		}
		if rng.IntN(4) == 0 {
			mantissa = -mantissa
		}
		checkFromQuantity(t, name, mantissa, exp)
	}
	for _, tc := range []struct {
		n     int64
		shift uint // binary suffix: Pi is 50, Ei 60
	}{{4, 60}, {3, 60}, {1, 60}, {5, 50}, {10, 50}, {1023, 50}, {4096, 50}, {4097, 50}, {8, 60}, {16, 60}} {
		suffix := map[uint]string{50: "Pi", 60: "Ei"}[tc.shift]
		q := resource.MustParse(fmt.Sprintf("%d%s", tc.n, suffix))
		want := new(big.Int).Lsh(big.NewInt(tc.n), tc.shift)
		a, err := FromQuantity(corev1.ResourceMemory, q)
		countable := want.Cmp(refMaxAmount) <= 0
		if countable != (err == nil) || countable && a != want.Int64() {
			t.Errorf("FromQuantity(memory, %s) = %d, %v; exact %s", q.String(), a, err, want)
		}
	}
}

// refOp computes a op b (or a x n) exactly, with the Unlimited rules.
func refOp(op byte, a, b Amount) Amount {
	switch op {
	case '+':
		if a == Unlimited || b == Unlimited {
			return Unlimited
		}
		return refClamp(new(big.Int).Add(big.NewInt(a), big.NewInt(b)))
	case '-':
		switch {
		case a == Unlimited && b == Unlimited:
			return 0
		case a == Unlimited:
			return Unlimited
		case b == Unlimited:
			return -Max
		}
		return refClamp(new(big.Int).Sub(big.NewInt(a), big.NewInt(b)))
	}
	if a == 0 || b == 0 {
		return 0
	}
	if a == Unlimited && b > 0 {
		return Unlimited
	}
	return refClamp(new(big.Int).Mul(big.NewInt(a), big.NewInt(b)))
}

func checkOps(t *testing.T, a, b Amount) {
	t.Helper()
	for _, tc := range []struct {
		op  byte
		got Amount
	}{{'+', Add(a, b)}, {'-', Sub(a, b)}, {'*', Mul(a, b)}} {
		want := refOp(tc.op, a, b)
		if tc.got != want {
			t.Fatalf("%d %c %d = %d, want %d", a, tc.op, b, tc.got, want)
		}
		if tc.got == Unlimited && a != Unlimited && (b != Unlimited || tc.op == '*') {
			t.Fatalf("%d %c %d is Unlimited: finite arithmetic must not produce it", a, tc.op, b)
		}
	}
}

// interesting draws amounts near 0, ±MaxAmount, ±Max and Unlimited.
func interesting(rng *rand.Rand) Amount {
	centers := []Amount{0, 1, MaxAmount, Max, MaxAmount / 2, 1 << 31, 5 << 50}
	c := centers[rng.IntN(len(centers))] - Amount(rng.IntN(5))
	if rng.IntN(2) == 0 {
		c = -c
	}
	if rng.IntN(20) == 0 {
		c = Unlimited
	}
	return c
}

func FuzzArithmetic(f *testing.F) {
	f.Add(int64(Max), int64(1))
	f.Add(int64(MaxAmount), int64(MaxAmount))
	f.Add(int64(math.MinInt64+1), int64(-1))
	f.Add(int64(Unlimited), int64(-3))
	f.Fuzz(func(t *testing.T, a, b int64) {
		// Amounts are within ±Max, or Unlimited.
		if a < -Max || b < -Max {
			return
		}
		checkOps(t, a, b)
	})
}

func TestArithmeticNearTheLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 63))
	for i := 0; i < 100000; i++ {
		checkOps(t, interesting(rng), interesting(rng))
	}
}

// TestRequestsSumsAreCheckedExactly: adding many countable amounts up is
// refused by Check exactly when the exact sum is beyond MaxAmount, and a
// finite sum never becomes Unlimited.
func TestRequestsSumsAreCheckedExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 64))
	for i := 0; i < 5000; i++ {
		total := Requests{}
		exact := new(big.Int)
		for j := 0; j < 1+rng.IntN(6); j++ {
			a := rng.Int64N(MaxAmount/Amount(1+rng.IntN(4))) + 1
			total.Add(Requests{corev1.ResourceMemory: a})
			exact.Add(exact, big.NewInt(a))
		}
		n := int64(1 + rng.IntN(3))
		scaled := total.Scaled(n)
		exact.Mul(exact, big.NewInt(n))
		err := scaled.Check()
		if want := exact.Cmp(refMaxAmount) > 0; want != (err != nil) {
			t.Fatalf("sum %s: Check() = %v", exact, err)
		}
		if err == nil && big.NewInt(scaled[corev1.ResourceMemory]).Cmp(exact) != 0 {
			t.Fatalf("sum %s counted as %d", exact, scaled[corev1.ResourceMemory])
		}
		if scaled[corev1.ResourceMemory] == Unlimited {
			t.Fatalf("sum %s became Unlimited", exact)
		}
	}
}
