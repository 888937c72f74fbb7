package intern

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// Equal strings built apart come back as one copy.
func TestShareHandsOutTheFirstCopy(t *testing.T) {
	tb := New()
	a := fmt.Sprintf("insufficient quota for %s", "cpu")
	b := fmt.Sprintf("insufficient quota for %s", "cpu")
	if same(a, b) {
		t.Fatal("test strings share memory already")
	}
	if got := tb.Share(a); !same(got, a) {
		t.Fatal("the first copy is not the one kept")
	}
	if got := tb.Share(b); !same(got, a) || got != b {
		t.Fatalf("Share(%q) = %q, not the first copy", b, got)
	}
}

// The table stops growing at its bound, and long strings are not kept.
func TestTableIsBounded(t *testing.T) {
	tb := New()
	for i := range MaxStrings + 10 {
		tb.Share(fmt.Sprintf("reason-%d", i))
	}
	if len(tb.seen) != MaxStrings {
		t.Fatalf("table holds %d strings, want the bound %d", len(tb.seen), MaxStrings)
	}
	late := fmt.Sprintf("reason-%d", MaxStrings+5)
	if got := tb.Share(late); got != late {
		t.Fatalf("Share(%q) = %q", late, got)
	}
	long := New()
	long.Share(strings.Repeat("x", MaxLen+1))
	if len(long.seen) != 0 {
		t.Fatal("a string over the length bound was kept")
	}
}
