package manager

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// denyAdmissionOf installs a ValidatingAdmissionPolicy that refuses any
// status write giving the named workload of ns an admission, and waits
// until the API server enforces it (a dry-run write is refused). It
// returns the policy's name.
func denyAdmissionOf(t *testing.T, ns, name string) string {
	t.Helper()
	policy := "deny-" + ns
	create(t, &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{kueue.GroupVersion.Group}, APIVersions: []string{"*"},
						Resources: []string{"workloads/status"}},
				}}},
			},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.name != '%s' || !has(object.status.admission)", name),
				Message:    "denied by test policy",
			}},
		},
	}, &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	})
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.Delete(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: policy}})
		_ = env.Client.Delete(ctx, &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: policy}})
	})
	eventually(t, 30*time.Second, "the policy enforced", func() error {
		wl := getWorkload(t, ns, name)
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "probe", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main",
			Count: ptr.To[int32](1), ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
		err := env.Client.Status().Update(context.Background(), wl, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "denied by test policy") {
			return fmt.Errorf("a dry-run admission went through (%v)", err)
		}
		return nil
	})
	return policy
}

// policyDenials reads from the API server's metrics how many requests the
// policy denied.
func policyDenials(t *testing.T, policy string) int {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	total := 0
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_validating_admission_policy_check_total{") ||
			!strings.Contains(line, `policy="`+policy+`"`) || !strings.Contains(line, `enforcement_action="deny"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		total += int(v)
	}
	return total
}
