package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/controller/status"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/report"
)

// registerOnce registers Kuota's metrics with controller-runtime's registry
// once per process (tests build several managers in one process).
var registerOnce = sync.OnceValue(func() error {
	err := metrics.Register(ctrlmetrics.Registry)
	if err == nil {
		err = metrics.RegisterKuota(ctrlmetrics.Registry)
	}
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		return nil
	}
	return err
})

// metricsSetup returns how workload events and queue gauges are labelled.
func metricsSetup(cfg *configapi.Configuration, reader client.Reader, c *cache.Cache) (*report.Labels, status.MetricsOptions, error) {
	if err := registerOnce(); err != nil {
		return nil, status.MetricsOptions{}, err
	}
	metrics.SetUnparksSource(c.Unparks)
	wl := &report.Labels{Reader: reader, Cache: c}
	opts := status.MetricsOptions{Enabled: true, ClusterQueueResources: cfg.Metrics.EnableClusterQueueResources}
	if lqm := cfg.Metrics.LocalQueueMetrics; lqm != nil && lqm.Enable {
		var sel labels.Selector
		if lqm.LocalQueueSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(lqm.LocalQueueSelector)
			if err != nil {
				return nil, status.MetricsOptions{}, fmt.Errorf("metrics.localQueueMetrics.localQueueSelector: %w", err)
			}
			sel = s
		}
		wl.LocalQueues, wl.Selector = true, sel
		opts.LocalQueues, opts.LocalQueueSelector = true, sel
	}
	return wl, opts, nil
}

// roleTracker sets the replica_role label: follower until this replica is
// elected, leader after; standalone without leader election.
type roleTracker struct{}

// NeedLeaderElection: Start runs once this replica leads.
func (roleTracker) NeedLeaderElection() bool { return true }

// Start marks the replica as leader.
func (roleTracker) Start(ctx context.Context) error {
	metrics.SetReplicaRole(metrics.RoleLeader)
	<-ctx.Done()
	return nil
}

// initialRole is the replica role before any election.
func initialRole(cfg *configapi.Configuration) string {
	if le := cfg.LeaderElection; le != nil && ptr.Deref(le.LeaderElect, false) {
		return metrics.RoleFollower
	}
	return metrics.RoleStandalone
}
