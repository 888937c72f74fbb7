package compat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// allowedDiff is one accepted difference between Kueue's CRD and ours.
type allowedDiff struct {
	crd    string // plural, e.g. "workloads"
	path   string // e.g. ".spec.podSets[].template.spec.containers[]"
	fact   string // a fact name, or factMissing for a path absent from ours
	reason string // why the difference is acceptable; required
}

// factMissing in an allow-list entry matches Report.Missing.
const factMissing = "missing"

// allowList holds every accepted difference. Each entry needs a reason, and
// TestAllowListEntriesAreLive fails when an entry no longer matches a real
// difference, so the list cannot go stale.
var allowList = []allowedDiff{
	{crd: "clusterqueues", path: ".spec", fact: "x-kubernetes-validations",
		reason: "Kuota also rejects lendingLimit without a cohort in CEL (Kueue only in its webhook), so the API server refuses it even without the webhook"},
	{crd: "clusterqueues", path: ".spec.resourceGroups[].flavors[].resources[]", fact: "x-kubernetes-validations",
		reason: "Kuota rejects negative quotas and limits in CEL; Kueue rejects them in its webhook"},
	{crd: "cohorts", path: ".spec", fact: "x-kubernetes-validations",
		reason: "Kuota rejects borrowingLimit/lendingLimit on a root Cohort in CEL; Kueue rejects them in its webhook"},
	{crd: "cohorts", path: ".spec.resourceGroups[].flavors[].resources[]", fact: "x-kubernetes-validations",
		reason: "Kuota rejects negative quotas and limits in CEL; Kueue rejects them in its webhook"},
}

func (a allowedDiff) matchesMissing(crd, path string) bool {
	return a.crd == crd && a.fact == factMissing && a.path == path
}

func (a allowedDiff) matchesMismatch(crd string, m Mismatch) bool {
	return a.crd == crd && a.fact == m.Fact && a.path == m.Path
}

// subtractAllowed removes allow-listed items from rep and returns the rest
// plus the number of items removed.
func subtractAllowed(crd string, rep Report, allow []allowedDiff) (Report, int) {
	out := Report{Extra: rep.Extra}
	for _, p := range rep.Missing {
		if !slices.ContainsFunc(allow, func(a allowedDiff) bool { return a.matchesMissing(crd, p) }) {
			out.Missing = append(out.Missing, p)
		}
	}
	for _, m := range rep.Mismatched {
		if !slices.ContainsFunc(allow, func(a allowedDiff) bool { return a.matchesMismatch(crd, m) }) {
			out.Mismatched = append(out.Mismatched, m)
		}
	}
	removed := len(rep.Missing) + len(rep.Mismatched) - len(out.Missing) - len(out.Mismatched)
	return out, removed
}

// loadPair loads Kueue's reference snapshot and ours for plural, of the
// version under test.
func loadPair(refDir, ourDir, plural string) (ref, ours *Snapshot, err error) {
	return loadVersionPair(refDir, ourDir, plural, Version)
}

// loadVersionPair loads Kueue's reference snapshot and ours for plural, of
// one version.
func loadVersionPair(refDir, ourDir, plural, version string) (ref, ours *Snapshot, err error) {
	refCRD, err := cachedCRD(filepath.Join(refDir, CRDFileName(plural)))
	if err != nil {
		return nil, nil, fmt.Errorf("reference: %w", err)
	}
	if ref, err = Flatten(refCRD, version); err != nil {
		return nil, nil, fmt.Errorf("reference: %w", err)
	}
	ourFile := filepath.Join(ourDir, CRDFileName(plural))
	ourCRD, err := LoadCRD(ourFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("our CRD %s does not exist (generate it with controller-gen from api/): %w", ourFile, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ours: %w", err)
	}
	if ours, err = Flatten(ourCRD, version); err != nil {
		return nil, nil, fmt.Errorf("ours: %w", err)
	}
	return ref, ours, nil
}

func ourDir(t *testing.T) string {
	t.Helper()
	dir, err := OurCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReferenceSetIsComplete makes sure no reference CRD is silently skipped.
func TestReferenceSetIsComplete(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(referenceDir(t), Group+"_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), Group+"_"), ".yaml"))
	}
	sort.Strings(got)
	if !slices.Equal(got, plurals) {
		t.Errorf("reference CRDs are %v, the test knows %v", got, plurals)
	}
}

// TestCRDCompat compares each of Kueue's v1beta2 CRDs with ours.
func TestCRDCompat(t *testing.T) {
	refDir, oursDir := referenceDir(t), ourDir(t)
	var missing, mismatched, extra, allowed, failedLoads int
	for _, plural := range plurals {
		t.Run(plural, func(t *testing.T) {
			ref, ours, err := loadPair(refDir, oursDir, plural)
			if err != nil {
				failedLoads++
				t.Fatalf("compat: %s: %v", plural, err)
			}
			rep, nAllowed := subtractAllowed(plural, Compare(ref, ours), allowList)
			missing += len(rep.Missing)
			mismatched += len(rep.Mismatched)
			extra += len(rep.Extra)
			allowed += nAllowed
			t.Logf("compat: %-26s %5d paths: %d missing, %d mismatched, %d extra (allowed), %d allow-listed",
				plural, ref.Len(), len(rep.Missing), len(rep.Mismatched), len(rep.Extra), nAllowed)
			for _, p := range rep.Extra {
				t.Logf("  extra (allowed): %s", p)
			}
			if !rep.Clean() {
				clean := Report{Missing: rep.Missing, Mismatched: rep.Mismatched}
				t.Errorf("CRD %s %s differs from Kueue's (%d missing, %d mismatched):\n%s",
					CRDFileName(plural), Version, len(rep.Missing), len(rep.Mismatched), clean)
			}
		})
	}
	t.Logf("compat: %d CRDs, %d missing, %d mismatched, %d extra (allowed), %d allow-listed, %d not loadable",
		len(plurals), missing, mismatched, extra, allowed, failedLoads)
}

// TestAllowListEntriesAreLive fails on allow-list entries without a reason or
// that no longer match a real difference.
func TestAllowListEntriesAreLive(t *testing.T) {
	refDir, oursDir := referenceDir(t), ourDir(t)
	for i, a := range allowList {
		name := fmt.Sprintf("allowList[%d] {%s %s %s}", i, a.crd, a.path, a.fact)
		if strings.TrimSpace(a.reason) == "" {
			t.Errorf("%s has no reason", name)
		}
		if !slices.Contains(plurals, a.crd) || a.path == "" || a.fact == "" {
			t.Errorf("%s: crd must be one of %v and path and fact must be set", name, plurals)
			continue
		}
		ref, ours, err := loadPair(refDir, oursDir, a.crd)
		if err != nil {
			t.Errorf("%s: cannot check: %v", name, err)
			continue
		}
		if _, removed := subtractAllowed(a.crd, Compare(ref, ours), []allowedDiff{a}); removed == 0 {
			t.Errorf("%s is stale: no such difference any more; delete it", name)
		}
	}
}

// TestSubtractAllowed checks the allow-list matching on a synthetic report.
func TestSubtractAllowed(t *testing.T) {
	rep := Report{
		Missing: []string{".spec.a", ".spec.b"},
		Mismatched: []Mismatch{
			{Path: ".spec.c", Fact: "type", Want: "string", Got: "integer"},
			{Path: ".spec.c", Fact: "format", Want: Unset, Got: "int32"},
		},
		Extra: []string{".spec.z"},
	}
	allow := []allowedDiff{
		{crd: "cohorts", path: ".spec.a", fact: factMissing, reason: "test"},
		{crd: "cohorts", path: ".spec.c", fact: "format", reason: "test"},
		{crd: "workloads", path: ".spec.b", fact: factMissing, reason: "other CRD"},
		{crd: "cohorts", path: ".spec.b", fact: "type", reason: "wrong fact"},
	}
	got, removed := subtractAllowed("cohorts", rep, allow)
	if removed != 2 {
		t.Errorf("removed = %d, want 2", removed)
	}
	if !slices.Equal(got.Missing, []string{".spec.b"}) {
		t.Errorf("Missing = %v, want [.spec.b]", got.Missing)
	}
	if len(got.Mismatched) != 1 || got.Mismatched[0].Fact != "type" {
		t.Errorf("Mismatched = %v, want only the type mismatch", got.Mismatched)
	}
	if !slices.Equal(got.Extra, rep.Extra) {
		t.Errorf("Extra = %v, want %v", got.Extra, rep.Extra)
	}
}
