package manager

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/paths"
)

// Kueue's default manager Configuration, as its install ships it, loads
// unchanged and starts Kuota with every integration it lists on, though
// none of the third-party kinds' CRDs is installed here: Jobs queue and
// run meanwhile, and once JobSet's CRD is installed JobSets queue too,
// without a restart. (The command line's part, the bind addresses, is the
// test's: ports 0, so that tests may run side by side.)
func TestKueueShippedConfigurationStartsTheManager(t *testing.T) {
	ctx := context.Background()
	shared, err := paths.SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := configapi.Load(filepath.Join(shared, "compat", "config", "controller_manager_config.yaml"))
	if err != nil {
		t.Fatalf("loading Kueue's Configuration: %v", err)
	}
	if !ptr.Deref(cfg.LeaderElection.LeaderElect, false) || len(cfg.Integrations.Frameworks) < 10 {
		t.Fatalf("not Kueue's shipped Configuration: leaderElect %v, frameworks %v", cfg.LeaderElection.LeaderElect, cfg.Integrations.Frameworks)
	}
	// The Lease lives in the manager's namespace, as in Kueue's install.
	leaseNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ptr.Deref(cfg.Namespace, "")}}
	if err := env.Client.Create(ctx, leaseNS); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, name := range cfg.Integrations.Frameworks {
		gvk, _ := configapi.BuiltInFrameworkGVK(name)
		if _, err := dc.ServerResourcesForGroupVersion(gvk.GroupVersion().String()); apierrors.IsNotFound(err) {
			missing = append(missing, name)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(missing) < 5 {
		t.Fatalf("the test needs several integrations without their CRD; missing only %v", missing)
	}
	t.Logf("integrations whose CRD is missing at start: %v", missing)

	fm, err := env.StartManagerWith(cfg, func(o *app.Options) { o.LeaderElectionNamespace = "" })
	if err != nil {
		t.Fatalf("starting the manager with Kueue's Configuration: %v", err)
	}
	m := &testManager{Manager: fm}
	current = m
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})

	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4"), localQueue(ns, "lq", cq))
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "etl", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Parallelism: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: childPodSpec()}}}
	create(t, job)
	eventually(t, 60*time.Second, "the Job is admitted and started", func() error {
		var j batchv1.Job
		if err := env.Client.Get(ctx, objectKey(ns, "etl"), &j); err != nil {
			return err
		}
		if ptr.Deref(j.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})

	dir, err := paths.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, "config", "components", "crd", "bases")}}); err != nil {
		t.Fatal(err)
	}
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: jobsetapi.JobSetSpec{Suspend: ptr.To(true), ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "workers", Replicas: 1,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}}}}
	if err := c.Create(ctx, js); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the JobSet integration starts and admits the JobSet", func() error {
		var wl kueue.Workload
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(js.Name, js.UID, jobset.GVK)}, &wl); err != nil {
			return err
		}
		if wl.Status.Admission == nil {
			return fmt.Errorf("Workload %s not admitted yet", wl.Name)
		}
		return nil
	})
}
