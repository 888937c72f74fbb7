package multicluster

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/multikueue"
)

// Options configure MultiKueue in the manager.
type Options struct {
	// Namespace holds the kubeconfig Secrets.
	Namespace string
	// Origin labels what this manager creates in workers.
	Origin            string
	WorkerLostTimeout time.Duration
	// CheckPaths keeps Path kubeconfigs inside KubeConfigDir.
	CheckPaths bool
	Dispatch   multikueue.Dispatch
	// GCInterval is how often the workers are swept for copies whose
	// manager Workload is gone; 0 turns the sweep off.
	GCInterval time.Duration
	// SpecSync forwards spec edits of running jobs to their worker
	// (gate MultiKueueRemoteSpecSync).
	SpecSync bool
}

// Setup registers MultiKueue's controllers for the enabled job kinds that
// MultiKueue can run.
func Setup(mgr ctrl.Manager, writer *apply.Writer, enabled []jobframework.Integration, o Options) error {
	kinds := map[schema.GroupVersionKind]jobframework.Integration{}
	var objs []client.Object
	pods := false
	for _, in := range enabled {
		if in.Name == jobframework.PodFrameworkName {
			pods = true
			objs = append(objs, &corev1.Pod{})
		}
		if in.NewJob == nil {
			continue
		}
		if _, ok := in.NewJob(nil).(jobframework.JobWithRemote); ok {
			kinds[in.GVK] = in
			objs = append(objs, in.NewJob(nil).Object())
		}
	}
	remotes := NewRemotes(mgr.GetScheme(), o.Origin, objs)
	if err := mgr.Add(remotes); err != nil {
		return fmt.Errorf("adding the MultiKueue connections: %w", err)
	}
	if o.GCInterval > 0 {
		if err := mgr.Add(Collector{Remotes: remotes, Interval: o.GCInterval}); err != nil {
			return fmt.Errorf("adding the MultiKueue garbage collector: %w", err)
		}
	}
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&CheckReconciler{Client: mgr.GetClient()},
		&ClusterReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Remotes: remotes,
			Namespace: o.Namespace, CheckPaths: o.CheckPaths},
		&WorkloadReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Writer: writer,
			Recorder: mgr.GetEventRecorderFor("kueue-multikueue-controller"), Remotes: remotes, Kinds: kinds,
			Pods: pods, SpecSync: o.SpecSync, WorkerLostTimeout: o.WorkerLostTimeout, Dispatch: o.Dispatch},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up MultiKueue %T: %w", r, err)
		}
	}
	return nil
}
