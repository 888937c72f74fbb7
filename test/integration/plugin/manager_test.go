package plugin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// TestListWithManager lists what a running manager wrote: one Job admitted,
// one pending for lack of quota, and the queues' counts.
func TestListWithManager(t *testing.T) {
	cfg, err := framework.ManagerConfig()
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping the manager: %v", err)
		}
	})
	ns := namespace(t, "with-manager")
	create(t,
		&kueue.ResourceFlavor{ObjectMeta: metav1Name("mgr-rf")},
		&kueue.ClusterQueue{ObjectMeta: metav1Name("mgr-cq"), Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "mgr-rf", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1")}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mgr-lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "mgr-cq"}},
	)
	for _, name := range []string{"first", "second"} {
		job := newJob(ns, name)
		job.Labels = map[string]string{jobframework.QueueNameLabel: "mgr-lq"}
		create(t, job)
	}
	var out string
	testutil.Eventually(t, 60*time.Second, 200*time.Millisecond, "one workload admitted, one pending, in list workload", func() error {
		o, _, err := kuota(t, "", "list", "workload", "-n", ns)
		if err != nil {
			return err
		}
		out = o
		if strings.Count(o, "ADMITTED") != 1 || strings.Count(o, "PENDING") != 1 {
			return fmt.Errorf("output:\n%s", o)
		}
		return nil
	})
	jobs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		// NAME JOB-TYPE JOB-NAME LOCALQUEUE CLUSTERQUEUE STATUS [EXEC TIME] AGE
		if len(f) < 7 || f[1] != "job.batch" || f[3] != "mgr-lq" || f[4] != "mgr-cq" {
			t.Errorf("row %q: want job.batch, its job's name, mgr-lq and mgr-cq", line)
		}
		if len(f) > 2 {
			jobs[f[2]] = true
		}
	}
	if !jobs["first"] || !jobs["second"] {
		t.Errorf("JOB NAME column shows %v, want first and second", jobs)
	}
	testutil.Eventually(t, 60*time.Second, 200*time.Millisecond, "the queues' counts in list clusterqueue and list localqueue", func() error {
		cq, _, err := kuota(t, "", "list", "cq", "--field-selector", "metadata.name=mgr-cq")
		if err != nil {
			return err
		}
		lq, _, err := kuota(t, "", "list", "lq", "-n", ns)
		if err != nil {
			return err
		}
		wantCQ := "mgr-cq            1                   1                    true     20y"
		wantLQ := "mgr-lq   mgr-cq         1                   1                    20y"
		if !strings.Contains(cq, wantCQ) || !strings.Contains(lq, wantLQ) {
			return fmt.Errorf("list cq:\n%s\nlist lq:\n%s", cq, lq)
		}
		return nil
	})
}
