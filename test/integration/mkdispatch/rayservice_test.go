package mkdispatch

import (
	"context"
	"fmt"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/ray"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func withRayServices(c *configapi.Configuration) {
	c.Integrations.Frameworks = append(c.Integrations.Frameworks, ray.RayServiceFramework)
}

// A RayService runs in a worker, and an edit of its serveConfigV2 in the
// manager reaches the worker's RayService, whose operator rolls it out
// (Kueue's MultiKueueRemoteSpecSync).
func TestRayServiceServeConfigReachesTheWorker(t *testing.T) {
	ns := setup(t)
	startManager(t, manager, withRayServices)
	startManager(t, worker1, withRayServices)
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	svc := &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: rayv1.RayServiceSpec{
			ManagedBy:     ptr.To(jobframework.MultiKueueManagedBy),
			ServeConfigV2: "applications: [{name: v1}]",
			RayClusterSpec: rayv1.RayClusterSpec{Suspend: ptr.To(true),
				HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: tmpl}},
		},
	}
	create(t, manager, svc)
	remoteConfig := func() (string, error) {
		var rs rayv1.RayService
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(svc), &rs); err != nil {
			return "", err
		}
		if ptr.Deref(rs.Spec.RayClusterSpec.Suspend, true) {
			return "", fmt.Errorf("suspended in the worker")
		}
		return rs.Spec.ServeConfigV2, nil
	}
	eventually(t, "the RayService runs in worker1", func() error {
		_, err := remoteConfig()
		return err
	})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(t, manager, client.ObjectKeyFromObject(svc), svc)
		svc.Spec.ServeConfigV2 = "applications: [{name: v2}]"
		return manager.Client.Update(context.Background(), svc)
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the edit reaches worker1", func() error {
		got, err := remoteConfig()
		if err == nil && got != "applications: [{name: v2}]" {
			err = fmt.Errorf("serveConfigV2 %q", got)
		}
		return err
	})
}
