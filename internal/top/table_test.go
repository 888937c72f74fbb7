package top

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func usage(name corev1.ResourceName, total, borrowed string) kueue.ResourceUsage {
	return kueue.ResourceUsage{Name: name, Total: resource.MustParse(total), Borrowed: resource.MustParse(borrowed)}
}

func snapshot() Snapshot {
	gpu := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}, Spec: kueue.ClusterQueueSpec{CohortName: "org",
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu", "nvidia.com/gpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "a100", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("32")}, {Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("8")}}},
			{Name: "t4", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("16")}, {Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("4")}}},
		}}}},
		Status: kueue.ClusterQueueStatus{PendingWorkloads: 7, ReservingWorkloads: 3, AdmittedWorkloads: 2, FlavorsUsage: []kueue.FlavorUsage{
			{Name: "a100", Resources: []kueue.ResourceUsage{usage("cpu", "40", "8"), {Name: "nvidia.com/gpu", Total: resource.MustParse("8")}}}}}}
	empty := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Spec: kueue.ClusterQueueSpec{
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "default", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("500m")}}}}}}}}
	lq := kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "team-b"},
		Status: kueue.LocalQueueStatus{PendingWorkloads: 7, ReservingWorkloads: 3, AdmittedWorkloads: 2, FlavorsUsage: []kueue.LocalQueueFlavorUsage{
			{Name: "a100", Resources: []kueue.LocalQueueResourceUsage{{Name: "cpu", Total: resource.MustParse("40")}}}}}}
	idle := kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "etl", Name: "nightly"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "batch"}}
	return Snapshot{ClusterQueues: []kueue.ClusterQueue{gpu, empty}, LocalQueues: []kueue.LocalQueue{lq, idle}}
}

// The table lists every queue by name, a line per flavor and resource of
// its quota, with use, nominal quota and the borrowed part.
func TestRender(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, snapshot()); err != nil {
		t.Fatal(err)
	}
	want := `CLUSTERQUEUE  COHORT  PENDING  RESERVING  ADMITTED  FLAVOR   RESOURCE        USAGE  NOMINAL  BORROWED
batch         -       0        0          0         default  cpu             0      500m     0
team-b        org     7        3          2         a100     cpu             40     32       8
                                                    a100     nvidia.com/gpu  8      8        0
                                                    t4       cpu             0      16       0
                                                    t4       nvidia.com/gpu  0      4        0

NAMESPACE  LOCALQUEUE  CLUSTERQUEUE  PENDING  RESERVING  ADMITTED  FLAVOR  RESOURCE  USAGE
etl        nightly     batch         0        0          0         -       -         -
ml         train       team-b        7        3          2         a100    cpu       40
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("connection refused")
}

// With --once a failed read is an error naming what was read.
func TestRunOnceReportsReadErrors(t *testing.T) {
	err := Run(context.Background(), failingReader{}, &bytes.Buffer{}, Options{Once: true})
	if err == nil || !strings.Contains(err.Error(), "listing ClusterQueues") {
		t.Fatalf("Run() = %v, want an error naming the ClusterQueues", err)
	}
}
