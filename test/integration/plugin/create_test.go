package plugin

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestCreateClusterQueue(t *testing.T) {
	tr := newTranscript(t)
	tr.ok("create", "clusterqueue", "create-cq", "--cohort", "team", "--queuing-strategy", "StrictFIFO",
		"--namespace-selector", "team=a", "--reclaim-within-cohort", "Any", "--preemption-within-cluster-queue", "LowerPriority",
		"--nominal-quota", "alpha:cpu=9;memory=36Gi,beta:nvidia.com/gpu=4",
		"--borrowing-limit", "alpha:cpu=1;memory=4Gi", "--lending-limit", "beta:nvidia.com/gpu=2")
	tr.ok("create", "cq", "create-cq-plain")
	tr.ok("create", "cq", "create-cq-dry", "--dry-run", "server")
	tr.ok("create", "cq", "create-cq-client", "--dry-run", "client", "-o", "yaml")
	// Bad flags: each error names the flag.
	for _, args := range [][]string{
		{"--queuing-strategy", "Fastest"},
		{"--reclaim-within-cohort", "Sometimes"},
		{"--preemption-within-cluster-queue", "Never!"},
		{"--nominal-quota", "alpha:cpu=many"},
		{"--nominal-quota", "cpu=1"},
		{"--cohort", "c", "--nominal-quota", "a:cpu=1", "--lending-limit", "a:memory=1"},
		{"--borrowing-limit", "a:cpu=1"},
		{"--dry-run", "maybe"},
	} {
		err := tr.fails(append([]string{"create", "cq", "create-cq-bad"}, args...)...)
		if !strings.Contains(err.Error(), args[len(args)-2]) {
			t.Errorf("error %q does not name flag %s", err, args[len(args)-2])
		}
	}
	tr.check()

	var cq kueue.ClusterQueue
	get(t, client.ObjectKey{Name: "create-cq"}, &cq)
	s := cq.Spec
	if s.CohortName != "team" || s.QueueingStrategy != kueue.StrictFIFO || s.NamespaceSelector.MatchLabels["team"] != "a" ||
		s.Preemption.ReclaimWithinCohort != kueue.PreemptionPolicyAny || s.Preemption.WithinClusterQueue != kueue.PreemptionPolicyLowerPriority {
		t.Errorf("ClusterQueue spec %+v does not hold the flags", s)
	}
	if len(s.ResourceGroups) != 2 {
		t.Fatalf("resource groups %+v, want 2 (cpu+memory, gpu)", s.ResourceGroups)
	}
	alpha := s.ResourceGroups[0].Flavors[0]
	if alpha.Name != "alpha" || !alpha.Resources[1].NominalQuota.Equal(resource.MustParse("36Gi")) ||
		!alpha.Resources[0].BorrowingLimit.Equal(resource.MustParse("1")) {
		t.Errorf("flavor alpha %+v, want cpu=9 (borrowing 1), memory=36Gi (borrowing 4Gi)", alpha)
	}
	beta := s.ResourceGroups[1].Flavors[0]
	if beta.Name != "beta" || beta.Resources[0].Name != "nvidia.com/gpu" || !beta.Resources[0].LendingLimit.Equal(resource.MustParse("2")) {
		t.Errorf("flavor beta %+v, want nvidia.com/gpu=4 lending 2", beta)
	}
	for _, name := range []string{"create-cq-dry", "create-cq-client", "create-cq-bad"} {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &kueue.ClusterQueue{}); err == nil {
			t.Errorf("ClusterQueue %s exists; a dry run or a bad flag must create nothing", name)
		}
	}
}

func TestCreateLocalQueue(t *testing.T) {
	ns := namespace(t, "create-lq")
	create(t, &kueue.ClusterQueue{ObjectMeta: metav1Name("create-lq-cq")})
	tr := newTranscript(t)
	tr.ok("create", "localqueue", "lq", "-n", ns, "-c", "create-lq-cq")
	tr.fails("create", "lq", "lq-unknown", "-n", ns, "-c", "no-such-cq")
	tr.ok("create", "lq", "lq-unknown", "-n", ns, "-c", "no-such-cq", "--ignore-unknown-cq")
	tr.fails("create", "lq", "lq-no-cq", "-n", ns)
	tr.check()

	var lq kueue.LocalQueue
	get(t, client.ObjectKey{Namespace: ns, Name: "lq"}, &lq)
	if lq.Spec.ClusterQueue != "create-lq-cq" {
		t.Errorf("LocalQueue points to %q, want create-lq-cq", lq.Spec.ClusterQueue)
	}
	get(t, client.ObjectKey{Namespace: ns, Name: "lq-unknown"}, &lq)
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "lq-no-cq"}, &lq); err == nil {
		t.Error("LocalQueue lq-no-cq was created without --clusterqueue")
	}
}

func TestCreateResourceFlavor(t *testing.T) {
	tr := newTranscript(t)
	tr.ok("create", "resourceflavor", "create-rf", "--node-labels", "pool=gpu,zone=a",
		"--node-taints", "gpu=true:NoSchedule", "--tolerations", "gpu=true:NoSchedule,spot")
	tr.ok("create", "rf", "create-rf-plain")
	tr.fails("create", "rf", "create-rf-bad", "--node-taints", "gpu=true")
	tr.fails("create", "rf", "create-rf-bad", "--tolerations", "gpu:Sometimes")
	tr.check()

	var rf kueue.ResourceFlavor
	get(t, client.ObjectKey{Name: "create-rf"}, &rf)
	if rf.Spec.NodeLabels["pool"] != "gpu" || rf.Spec.NodeLabels["zone"] != "a" {
		t.Errorf("node labels %v", rf.Spec.NodeLabels)
	}
	if len(rf.Spec.NodeTaints) != 1 || rf.Spec.NodeTaints[0] != (corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("node taints %v", rf.Spec.NodeTaints)
	}
	if len(rf.Spec.Tolerations) != 2 || rf.Spec.Tolerations[1].Operator != corev1.TolerationOpExists {
		t.Errorf("tolerations %v", rf.Spec.Tolerations)
	}
}
