package compat

import (
	"slices"
	"testing"
)

// v1beta1Facts are the facts a v1beta1 field must share with Kueue's: what
// decides whether a manifest written for Kueue's v1beta1 is accepted and
// what it defaults to. Kuota's v1beta1 schema reuses v1beta2's types where
// the shape is the same, so v1beta2's tighter bounds, list types and CEL
// rules (which the webhooks enforce on the converted object anyway) may
// differ and are only logged.
var v1beta1Facts = []string{"type", "format", "enum", "default", "x-kubernetes-int-or-string",
	"x-kubernetes-embedded-resource", "x-kubernetes-preserve-unknown-fields", "additionalProperties"}

// v1beta1Allowed are accepted differences of those facts.
var v1beta1Allowed = []allowedDiff{
	{crd: "clusterqueues", path: ".spec.admissionScope.admissionMode", fact: "enum",
		reason: "Kueue's v1beta1 leaves the mode free and rejects unknown modes in v1beta2; Kuota rejects them in both"},
	{crd: "workloads", path: ".status.admission.podSetAssignments[].delayedTopologyRequest", fact: "enum",
		reason: "status written by the manager; v1beta2's two states in both versions"},
}

// TestCRDCompatV1beta1 checks that every field of Kueue's v1beta1 schema is
// served by ours with the same type, format, enum and default, so that
// v1beta1 manifests (Kueue's docs and users' files still use it) are
// accepted as Kueue accepts them. Fields ours adds (the v1beta2 fields
// v1beta1 keeps so that nothing is lost on a v1beta1 update) are logged.
func TestCRDCompatV1beta1(t *testing.T) {
	refDir, oursDir := referenceDir(t), ourDir(t)
	for _, plural := range plurals {
		t.Run(plural, func(t *testing.T) {
			ref, ours, err := loadVersionPair(refDir, oursDir, plural, "v1beta1")
			if err != nil {
				t.Fatalf("compat: %s v1beta1: %v", plural, err)
			}
			rep := Compare(ref, ours)
			for _, p := range rep.Missing {
				t.Errorf("v1beta1 %s: %s is missing", plural, p)
			}
			for _, m := range rep.Mismatched {
				allowed := slices.ContainsFunc(v1beta1Allowed, func(a allowedDiff) bool { return a.matchesMismatch(plural, m) })
				if slices.Contains(v1beta1Facts, m.Fact) && !allowed && m.Path != CRDPath && m.Path != RootPath {
					t.Errorf("v1beta1 %s: %s", plural, m)
				} else {
					t.Logf("v1beta1 %s (accepted): %s", plural, m)
				}
			}
			for _, p := range rep.Extra {
				t.Logf("v1beta1 %s extra: %s", plural, p)
			}
		})
	}
}

// TestV1beta2IsStoredAndV1beta1Served checks the versions of every CRD:
// both served, v1beta2 stored, v1beta1 deprecated, as Kueue does.
func TestV1beta2IsStoredAndV1beta1Served(t *testing.T) {
	oursDir := ourDir(t)
	for _, plural := range plurals {
		crd, err := LoadCRD(oursDir + "/" + CRDFileName(plural))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, v := range crd.Spec.Versions {
			state := "not served"
			if v.Served {
				state = "served"
			}
			if v.Name == "v1beta1" && (!v.Deprecated || v.DeprecationWarning == nil) {
				t.Errorf("%s v1beta1 is not marked deprecated with a warning, as Kueue marks it", plural)
			}
			if v.Storage {
				state += ", stored"
			}
			got[v.Name] = state
		}
		if got["v1beta1"] != "served" || got["v1beta2"] != "served, stored" || len(got) != 2 {
			t.Errorf("%s versions = %v, want v1beta1 served and v1beta2 served and stored", plural, got)
		}
	}
}
