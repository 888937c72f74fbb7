package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/multikueue"
	"github.com/kuota-dev/kuota/internal/provisioning"
)

// A MultiKueue check whose MultiKueueConfig does not exist says so, and
// the ClusterQueue using it is inactive for that check.
func TestMultiKueueCheckWithoutItsConfigIsInactive(t *testing.T) {
	startManager(t)
	ns, err := env.CreateNamespace(context.Background(), "mk")
	if err != nil {
		t.Fatal(err)
	}
	check, cq := ns+"-mk", ns+"-cq"
	create(t,
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: check}, Spec: kueue.AdmissionCheckSpec{
			ControllerName: multikueue.ControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "MultiKueueConfig", Name: check}}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: ns + "-f"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(ns + "-f"),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1")}}}}}},
			AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(check)}}},
		}},
	)
	eventually(t, 45*time.Second, "the check names its missing config", func() error {
		var ac kueue.AdmissionCheck
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: check}, &ac); err != nil {
			return err
		}
		c := meta.FindStatusCondition(ac.Status.Conditions, kueue.AdmissionCheckActive)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != multikueue.ReasonBadConfig || !strings.Contains(c.Message, check) {
			return fmt.Errorf("Active condition %+v", c)
		}
		return nil
	})
	waitClusterQueueActive(t, cq, metav1.ConditionFalse, "AdmissionCheckInactive")
}

// Without cluster-autoscaler's ProvisioningRequest CRD (this package's API
// server has none), a ProvisioningRequest check with a valid config says
// the kind is not served, and is not active.
func TestProvisioningCheckWithoutTheCRDSaysSo(t *testing.T) {
	startManager(t)
	name := "prov-not-served"
	create(t,
		&kueue.ProvisioningRequestConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: "check-capacity.autoscaling.x-k8s.io"}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.AdmissionCheckSpec{
			ControllerName: provisioning.ControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: provisioning.ConfigKind, Name: name}}},
	)
	eventually(t, 45*time.Second, "the check says ProvisioningRequests are not served", func() error {
		var ac kueue.AdmissionCheck
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &ac); err != nil {
			return err
		}
		c := meta.FindStatusCondition(ac.Status.Conditions, kueue.AdmissionCheckActive)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != provisioning.ReasonNotServed {
			return fmt.Errorf("Active condition %+v", c)
		}
		return nil
	})
}
