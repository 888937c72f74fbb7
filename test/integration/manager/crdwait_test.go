package manager

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/integrations/leaderworkerset"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/paths"
)

// An integration enabled before its kind's CRD is installed does not stop
// the manager: the manager admits as usual, and once the CRD is installed
// the integration starts, without a restart.
func TestIntegrationStartsWhenItsCRDIsInstalled(t *testing.T) {
	const syncTimeout = 2 * time.Second
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4"), localQueue(ns, "lq", cq))
	startManager(t, func(cfg *configapi.Configuration) {
		cfg.Integrations = &configapi.Integrations{Frameworks: []string{batchjob.Integration.Name, leaderworkerset.FrameworkName}}
		// A controller whose kind is missing past this timeout would stop
		// the manager (reported by the cleanup's Stop).
		cfg.Controller = &configapi.ControllerConfigurationSpec{CacheSyncTimeout: &metav1.Duration{Duration: syncTimeout}}
	})
	create(t, newWorkload(ns, "before", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "before", cq)
	time.Sleep(2 * syncTimeout)
	create(t, newWorkload(ns, "after", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "after", cq)

	dir, err := paths.ModuleDir("sigs.k8s.io/lws")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, "config", "crd", "bases")}}); err != nil {
		t.Fatal(err)
	}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "serve",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	lws := &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "infer", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](1), LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{
			Size: ptr.To[int32](2), WorkerTemplate: tmpl, RestartPolicy: lwsv1.RecreateGroupOnPodRestart},
			RolloutStrategy: lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType},
			StartupPolicy:   lwsv1.LeaderCreatedStartupPolicy},
	}
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), lws); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the LeaderWorkerSet integration creates its group's Workload", func() error {
		var wl kueue.Workload
		return c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: leaderworkerset.WorkloadName(lws, 0)}, &wl)
	})
}
