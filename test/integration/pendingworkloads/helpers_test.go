package pendingworkloads

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "vis")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// clusterQueue has quota for cpu cpus in flavor "default".
func clusterQueue(name, cpu string, strategy kueue.QueueingStrategy) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		QueueingStrategy:  strategy,
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default",
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)}}}},
		}},
	}}
}

func localQueue(ns, name, cq string) *kueue.LocalQueue {
	return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
}

// workload is one pod requesting cpu, with a priority.
func workload(ns, name, lq, cpu string, priority int32) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.WorkloadSpec{
		QueueName: kueue.LocalQueueName(lq),
		Priority:  ptr.To(priority),
		PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		}}}},
	}}
}

func ensureFlavor(t *testing.T) {
	t.Helper()
	err := env.Client.Create(context.Background(), &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func getWorkload(t *testing.T, ns, name string) *kueue.Workload {
	t.Helper()
	var wl kueue.Workload
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

func waitAdmitted(t *testing.T, ns, name string) {
	t.Helper()
	testutil.Eventually(t, 45*time.Second, 50*time.Millisecond, "workload "+name+" admitted", func() error {
		if wl := getWorkload(t, ns, name); !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
}

func finish(t *testing.T, ns, name string) {
	t.Helper()
	wl := getWorkload(t, ns, name)
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: kueue.WorkloadFinishedSucceeded, Message: "done"})
	if err := env.Client.Status().Update(context.Background(), wl); err != nil {
		t.Fatalf("finishing %s: %v", name, err)
	}
}

// get sends a GET through kube-apiserver as the given config's user and
// returns the status code and body.
func get(t *testing.T, cfg *rest.Config, path string) (int, []byte) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	req := cs.Discovery().RESTClient().Get().AbsPath(u.Path)
	for k, vs := range u.Query() {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	var code int
	body, err := req.Do(context.Background()).StatusCode(&code).Raw()
	if err != nil && code == 0 {
		t.Fatalf("GET %s: %v", path, err)
	}
	return code, body
}

// item is what a test compares of a PendingWorkload.
type item struct {
	Name       string
	LocalQueue string
	Priority   int32
	InCQ, InLQ int32
}

func (i item) String() string {
	return fmt.Sprintf("%s(lq=%s prio=%d cq#%d lq#%d)", i.Name, i.LocalQueue, i.Priority, i.InCQ, i.InLQ)
}

// pending GETs a pendingworkloads path as the test's admin, waiting while
// the APIService is not available yet, and returns its items.
func pending(t *testing.T, path string) ([]item, *visibilityapi.PendingWorkloadsSummary) {
	t.Helper()
	var s visibilityapi.PendingWorkloadsSummary
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "GET "+path, func() error {
		code, body := get(t, env.Config, path)
		if code != http.StatusOK {
			return fmt.Errorf("status %d: %s", code, body)
		}
		s = visibilityapi.PendingWorkloadsSummary{}
		return json.Unmarshal(body, &s)
	})
	out := make([]item, len(s.Items))
	for i, w := range s.Items {
		out[i] = item{w.Name, w.LocalQueueName, w.Priority, w.PositionInClusterQueue, w.PositionInLocalQueue}
	}
	return out, &s
}

// waitPending polls a pendingworkloads path until it returns want.
func waitPending(t *testing.T, path string, want []item) {
	t.Helper()
	testutil.Eventually(t, 45*time.Second, 100*time.Millisecond, "GET "+path, func() error {
		got, _ := pending(t, path)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		return nil
	})
}

func cqPath(version, cq, query string) string {
	return fmt.Sprintf("/apis/visibility.kueue.x-k8s.io/%s/clusterqueues/%s/pendingworkloads%s", version, cq, query)
}

func lqPath(version, ns, lq, query string) string {
	return fmt.Sprintf("/apis/visibility.kueue.x-k8s.io/%s/namespaces/%s/localqueues/%s/pendingworkloads%s", version, ns, lq, query)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
