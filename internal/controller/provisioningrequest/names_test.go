package provisioningrequest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/provisioning"
)

// The pure package spells cluster-autoscaler's names itself (it does not
// import the API package); they must be the API's.
func TestNamesAreTheAutoscalers(t *testing.T) {
	for ours, theirs := range map[string]string{
		provisioning.ConsumeAnnotation: autoscaling.ProvisioningRequestPodAnnotationKey,
		provisioning.ClassAnnotation:   autoscaling.ProvisioningClassPodAnnotationKey,
		provisioning.Accepted:          autoscaling.Accepted,
		provisioning.Provisioned:       autoscaling.Provisioned,
		provisioning.Failed:            autoscaling.Failed,
		provisioning.BookingExpired:    autoscaling.BookingExpired,
		provisioning.CapacityRevoked:   autoscaling.CapacityRevoked,
	} {
		if ours != theirs {
			t.Errorf("%q, the API says %q", ours, theirs)
		}
	}
}

func TestRequestRoundTrip(t *testing.T) {
	plan := &provisioning.Plan{Meta: metav1.ObjectMeta{Name: "r"}, ClassName: "c", Parameters: map[string]string{"k": "v"},
		Counts: []int32{3}, Templates: []*corev1.PodTemplate{newTemplate("ppt-r-main")}}
	pr := requestFrom(plan)
	if pr.Labels[jobframework.ManagedLabel] != "true" {
		t.Errorf("the request must carry the managed label: %v", pr.Labels)
	}
	if pr.Name != "r" || pr.Spec.ProvisioningClassName != "c" || pr.Spec.Parameters["k"] != "v" ||
		len(pr.Spec.PodSets) != 1 || pr.Spec.PodSets[0].Count != 3 || pr.Spec.PodSets[0].PodTemplateRef.Name != "ppt-r-main" {
		t.Errorf("request %+v", pr)
	}
	pr.Status.ProvisioningClassDetails = map[string]autoscaling.Detail{"pool": "p"}
	if got := requestOf(pr); got.Name != "r" || got.Details["pool"] != "p" {
		t.Errorf("read back %+v", got)
	}
}

func newTemplate(name string) *corev1.PodTemplate {
	return &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
