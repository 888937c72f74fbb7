package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// With objectRetentionPolicies.workloads.afterFinished, a finished
// Workload is deleted once the retention passes; a running one stays.
func TestFinishedWorkloadsAreDeletedAfterTheirRetention(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.ObjectRetentionPolicies = &configapi.ObjectRetentionPolicies{Workloads: &configapi.WorkloadRetentionPolicy{
			AfterFinished: &metav1.Duration{Duration: 2 * time.Second}}}
	})
	ns, cq, _ := singleQueue(t, "4")
	create(t, newWorkload(ns, "done", "lq", 1, "1", 0), newWorkload(ns, "running", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "done", cq)
	waitAdmitted(t, ns, "running", cq)
	finished := time.Now()
	finish(t, ns, "done")
	eventually(t, 45*time.Second, "the finished workload is deleted", func() error {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "done"}, &kueue.Workload{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	// The Finished condition's time is in whole seconds, so up to one of
	// the two seconds may have passed before the test saw it finish.
	if waited := time.Since(finished); waited < time.Second {
		t.Errorf("deleted %s after it finished, before its retention of 2s", waited)
	}
	getWorkload(t, ns, "running")
}
