package scheduler

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/workload"
)

// finishReplaced marks Finished (WorkloadSliceReplaced) the slice that an
// elastic job's new slice, wl, replaces once wl's admission is written: the
// job's running pods now count in wl. If this write fails the job
// reconciler finishes the old slice when it next sees both; until then the
// cache counts the job's quota once (it set the old slice aside at the
// assumption).
func (s *Scheduler) finishReplaced(ctx context.Context, wl *kueue.Workload, old *workload.Replacement, now time.Time) {
	var prev kueue.Workload
	if err := s.Client.Get(ctx, old.Key, &prev); err != nil || prev.UID != old.UID {
		return
	}
	msg := apply.SliceReplacedMessage(wl)
	if err := s.Writer.WorkloadStatus(ctx, &prev, apply.Finished(&prev, kueue.WorkloadSliceReplaced, msg, metav1.NewTime(now)), apply.AdmissionManager); err != nil {
		s.log.Info("replaced slice not finished; the job controller will", "workload", old.Key, "error", err.Error())
		return
	}
	s.Recorder.Event(&prev, corev1.EventTypeNormal, kueue.WorkloadSliceReplaced, msg)
}
