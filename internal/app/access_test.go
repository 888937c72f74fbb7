package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAccessCheckerNamesWhatIsRefused(t *testing.T) {
	cohort := schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Cohort"}
	job := schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(cohort, meta.RESTScopeRoot)
	mapper.Add(job, meta.RESTScopeNamespace)
	asked := 0
	down := true
	a := &accessChecker{mapper: mapper, review: func(_ context.Context, attrs authorizationv1.ResourceAttributes) (bool, error) {
		asked++
		if down {
			return false, errors.New("connection refused")
		}
		return attrs.Resource != "cohorts" || attrs.Verb == "get", nil
	}}
	ctx := context.Background()
	// An API server that does not answer: allowed for now, asked again.
	if err := a.check(ctx, cohort); err != nil {
		t.Fatalf("check with the reviews failing: %v", err)
	}
	down = false
	err := a.check(ctx, schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "CohortList"})
	if err == nil || !strings.Contains(err.Error(), "may not list cohorts.kueue.x-k8s.io, watch cohorts.kueue.x-k8s.io:") {
		t.Fatalf("check of a refused kind: %v", err)
	}
	if err := a.check(ctx, job); err != nil {
		t.Errorf("check of an allowed kind: %v", err)
	}
	before := asked
	if a.check(ctx, cohort) == nil || a.check(ctx, job) != nil || asked != before {
		t.Errorf("a second check asked again (%d reviews, was %d) or changed its answer", asked, before)
	}
	if err := a.Check(nil); err == nil || err.Error() != "the manager may not list cohorts.kueue.x-k8s.io, watch cohorts.kueue.x-k8s.io" {
		t.Errorf("readiness: %v", err)
	}
}
