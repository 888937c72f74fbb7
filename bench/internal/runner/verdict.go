package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/bench/internal/summary"
	"github.com/kuota-dev/kuota/internal/audit"
)

// auditSettle is how long the audit is repeated while the only violations
// are ClusterQueue statuses that disagree with the workloads: the manager
// publishes status shortly after the last finish, and a status not yet
// published is not a broken invariant. Any other violation is final.
const auditSettle = 30 * time.Second

// runAudit runs the auditor (what `kuota audit` runs) against the API
// server and returns its verdict.
func runAudit(ctx context.Context, c client.Reader) *summary.Audit {
	deadline := time.Now().Add(auditSettle)
	for {
		rep, err := audit.Run(ctx, c)
		if err != nil {
			return &summary.Audit{Error: err.Error()}
		}
		if rep.OK() || !onlyStatusMismatches(rep) || time.Now().After(deadline) {
			v := &summary.Audit{Violations: len(rep.Violations)}
			for _, x := range rep.Violations {
				v.Messages = append(v.Messages, x.String())
			}
			return v
		}
		select {
		case <-ctx.Done():
			return &summary.Audit{Error: ctx.Err().Error()}
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func onlyStatusMismatches(r *audit.Report) bool {
	for _, v := range r.Violations {
		if v.Kind != audit.KindStatusMismatch {
			return false
		}
	}
	return true
}

// verdictError is the run's failure, if any: it did not complete, or the
// audit failed or found violations. Missed targets are not failures.
func verdictError(s *summary.Summary) error {
	var errs []error
	if !s.Completed {
		errs = append(errs, fmt.Errorf("incomplete run: %d of %d workloads finished", s.Finished, s.Workloads))
	}
	for _, p := range s.Problems {
		errs = append(errs, errors.New(p))
	}
	switch a := s.Audit; {
	case a == nil:
		errs = append(errs, errors.New("the audit did not run"))
	case a.Error != "":
		errs = append(errs, fmt.Errorf("the audit failed: %s", a.Error))
	case a.Violations > 0:
		errs = append(errs, fmt.Errorf("the audit found %d violation(s)", a.Violations))
	}
	return errors.Join(errs...)
}
