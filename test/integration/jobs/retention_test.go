package jobs

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// With objectRetentionPolicies.workloads.afterDeactivatedByKueue, the Job
// of a Workload Kuota deactivated (here for running past its maximum
// execution time) is deleted.
func TestJobOfAWorkloadDeactivatedByKuotaIsDeleted(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.ObjectRetentionPolicies = &configapi.ObjectRetentionPolicies{Workloads: &configapi.WorkloadRetentionPolicy{
			AfterDeactivatedByKueue: &metav1.Duration{}}}
	})
	ns, _, fl := queues(t, "4")
	j := newJob(ns, "overtime", "lq", 1, "1")
	j.Labels[jobframework.MaxExecTimeSecondsLabel] = "1"
	create(t, j)
	waitRunning(t, ns, "overtime", fl)
	eventually(t, "the Job is deleted once its Workload is deactivated", func() error {
		err := env.Client.Get(context.Background(), objectKey(ns, "overtime"), &batchv1.Job{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}
