package ray

import (
	"context"
	"encoding/json"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"
)

// FuzzRayWebhooks runs arbitrary JSON, read as a RayJob, a RayCluster and
// a RayService, through each webhook's whole path: decode, default,
// validate on create, validate an update that starts it, and the PodSets
// of what was accepted. Bad input must give errors, never a panic.
func FuzzRayWebhooks(f *testing.F) {
	for _, obj := range []any{newRayJob(), newRayCluster(), newRayService(), &rayv1.RayJob{}} {
		data, err := json.Marshal(obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"rayClusterSpec":{"headGroupSpec":{"template":{}},"workerGroupSpecs":[{"groupName":"","replicas":-2,"numOfHosts":-1},{"groupName":"Head"}]},"submissionMode":"K8sJobMode"}}`))
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq"},"ownerReferences":[{"apiVersion":"ray.io/v1","kind":"RayJob","name":"x","uid":"u","controller":true}]},"spec":{"enableInTreeAutoscaling":true}}`))

	c := testClient(f)
	jw, cw, sw := rayJobWebhook(c), rayClusterWebhook(c), rayServiceWebhook(c)
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		var j rayv1.RayJob
		if json.Unmarshal(data, &j) == nil {
			j.Namespace = "ns"
			if jw.Default(ctx, &j) == nil {
				if _, err := jw.ValidateCreate(ctx, &j); err == nil {
					_, _ = NewRayJob(&j).PodSets()
				}
				started := j.DeepCopy()
				started.Spec.Suspend = false
				_, _ = jw.ValidateUpdate(ctx, &j, started)
			}
		}
		var rc rayv1.RayCluster
		if json.Unmarshal(data, &rc) == nil {
			rc.Namespace = "ns"
			if cw.Default(ctx, &rc) == nil {
				if _, err := cw.ValidateCreate(ctx, &rc); err == nil {
					_, _ = NewRayCluster(&rc).PodSets()
				}
				started := rc.DeepCopy()
				started.Spec.Suspend = ptr.To(false)
				_, _ = cw.ValidateUpdate(ctx, &rc, started)
			}
		}
		var rs rayv1.RayService
		if json.Unmarshal(data, &rs) == nil {
			rs.Namespace = "ns"
			if sw.Default(ctx, &rs) == nil {
				if _, err := sw.ValidateCreate(ctx, &rs); err == nil {
					_, _ = NewRayService(&rs).PodSets()
				}
				started := rs.DeepCopy()
				started.Spec.RayClusterSpec.Suspend = ptr.To(false)
				_, _ = sw.ValidateUpdate(ctx, &rs, started)
			}
		}
	})
}
