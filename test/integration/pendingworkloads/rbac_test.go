package pendingworkloads

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// as returns the admin's config impersonating a user.
func as(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	return cfg
}

// bundleRole reads a ClusterRole of the install bundle (config/visibility),
// named as the bundle names it.
func bundleRole(t *testing.T, file string) *rbacv1.ClusterRole {
	t.Helper()
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "visibility", file))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	role.Name = "kueue-" + role.Name
	return &role
}

// A tenant bound to the bundle's LocalQueue viewer role in its namespace
// reads its LocalQueues' pending workloads, and is refused another
// namespace's and the ClusterQueue's.
func TestTenantReadsOnlyItsOwnLocalQueues(t *testing.T) {
	ensureFlavor(t)
	mine, theirs := namespace(t), namespace(t)
	create(t, clusterQueue("cq-tenants", "0", kueue.BestEffortFIFO), localQueue(mine, "lq", "cq-tenants"), localQueue(theirs, "lq", "cq-tenants"),
		workload(mine, "mine", "lq", "1", 0), workload(theirs, "theirs", "lq", "1", -1))
	role := bundleRole(t, "pending_workloads_lq_viewer_role.yaml")
	create(t, role, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: mine, Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	defer env.Client.Delete(context.Background(), role)
	waitPending(t, lqPath("v1beta2", mine, "lq", ""), []item{{"mine", "lq", 0, 0, 0}}) // served, as admin

	alice := as("alice")
	testutil.Eventually(t, 10*time.Second, 100*time.Millisecond, "alice reads her LocalQueue", func() error {
		if code, body := get(t, alice, lqPath("v1beta2", mine, "lq", "")); code != http.StatusOK || !strings.Contains(string(body), `"mine"`) {
			return errorf("status %d: %s", code, body)
		}
		return nil
	})
	for _, path := range []string{lqPath("v1beta2", theirs, "lq", ""), cqPath("v1beta2", "cq-tenants", "")} {
		if code, body := get(t, alice, path); code != http.StatusForbidden {
			t.Errorf("alice GET %s = %d %s, want 403", path, code, body)
		}
	}
	if code, _ := get(t, as("bob"), lqPath("v1beta2", mine, "lq", "")); code != http.StatusForbidden {
		t.Errorf("a user without a binding got %d, want 403", code)
	}
}

// Kueue's example RBAC for the visibility API (compat/examples/visibility:
// a ClusterRole and a ClusterRoleBinding to the default ServiceAccount of
// namespace default) works unchanged.
func TestKueueExampleRBAC(t *testing.T) {
	ensureFlavor(t)
	ns := namespace(t)
	create(t, clusterQueue("cq-example", "0", kueue.BestEffortFIFO), localQueue(ns, "lq", "cq-example"), workload(ns, "w", "lq", "1", 0))
	sa := as("system:serviceaccount:default:default", "system:serviceaccounts", "system:serviceaccounts:default")
	path := cqPath("v1beta2", "cq-example", "")
	waitPending(t, path, []item{{"w", "lq", 0, 0, 0}})
	if code, _ := get(t, sa, path); code != http.StatusForbidden {
		t.Fatalf("before the example's RBAC, the ServiceAccount got %d, want 403", code)
	}
	examples := testutil.KueueExamples(t, rbacv1.GroupName, func(string) bool { return true })
	n := 0
	for _, ex := range examples {
		if ex.File != filepath.Join("visibility", "cluster-role-and-binding.yaml") {
			continue
		}
		obj := ex.Obj.DeepCopy()
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s %s from %s: %v", obj.GetKind(), obj.GetName(), ex.File, err)
		}
		defer env.Client.Delete(context.Background(), client.Object(obj))
		n++
	}
	if n != 2 {
		t.Fatalf("found %d objects in Kueue's visibility/cluster-role-and-binding.yaml, want 2", n)
	}
	testutil.Eventually(t, 10*time.Second, 100*time.Millisecond, "the example's ServiceAccount reads the ClusterQueue", func() error {
		if code, body := get(t, sa, path); code != http.StatusOK {
			return errorf("status %d: %s", code, body)
		}
		return nil
	})
}
