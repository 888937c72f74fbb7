package crds

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

// invalidCase is an object the API server must reject. When before is set, it
// is created first and the invalid object is applied as an update of it.
// statusBefore, when set, is applied to the status subresource in between.
type invalidCase struct {
	name         string
	before       string
	statusBefore string
	invalid      string
	status       bool     // apply invalid to the status subresource
	wantInError  []string // substrings the error must contain (field path first)
}

const cqHeader = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-invalid
`

func cqWithQuota(cohort, quota string) string {
	return cqHeader + "spec:\n" + cohort + `  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - name: cpu
` + quota
}

// manyGroups returns n resource groups, each with its own resource.
func manyGroups(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  - coveredResources: [\"example.com/r%d\"]\n    flavors:\n    - name: f%d\n      resources:\n      - name: example.com/r%d\n        nominalQuota: 1\n", i, i, i)
	}
	return b.String()
}

// manyFlavors returns one resource group with n flavors.
func manyFlavors(n int) string {
	var b strings.Builder
	b.WriteString("  - coveredResources: [\"cpu\"]\n    flavors:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - name: f%d\n      resources:\n      - name: cpu\n        nominalQuota: 1\n", i)
	}
	return b.String()
}

const workloadHeader = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: wl-invalid
  namespace: default
`

const podTemplate = `    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          resources:
            requests:
              cpu: "1"
`

var invalidCases = []invalidCase{
	{
		name:        "ClusterQueue queueingStrategy outside the enum",
		invalid:     cqHeader + "spec:\n  queueingStrategy: Random\n",
		wantInError: []string{"spec.queueingStrategy", "Unsupported value"},
	},
	{
		name:        "ClusterQueue withinClusterQueue outside the enum",
		invalid:     cqHeader + "spec:\n  preemption:\n    withinClusterQueue: Any\n",
		wantInError: []string{"spec.preemption.withinClusterQueue", "Unsupported value"},
	},
	{
		name:        "ClusterQueue negative nominalQuota",
		invalid:     cqWithQuota("", "        nominalQuota: -2\n"),
		wantInError: []string{"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "must not be negative"},
	},
	{
		name:        "ClusterQueue negative borrowingLimit",
		invalid:     cqWithQuota("  cohortName: team\n", "        nominalQuota: 2\n        borrowingLimit: \"-1\"\n"),
		wantInError: []string{"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", "must not be negative"},
	},
	{
		name:        "ClusterQueue borrowingLimit without a cohort",
		invalid:     cqWithQuota("", "        nominalQuota: 2\n        borrowingLimit: 1\n"),
		wantInError: []string{"spec", "borrowingLimit can only be set when cohortName is set"},
	},
	{
		name:        "ClusterQueue lendingLimit without a cohort",
		invalid:     cqWithQuota("", "        nominalQuota: 2\n        lendingLimit: 1\n"),
		wantInError: []string{"spec", "lendingLimit can only be set when cohortName is set"},
	},
	{
		name:        "ClusterQueue flavor with fewer quotas than covered resources",
		invalid:     cqHeader + "spec:\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: default\n      resources:\n      - name: cpu\n        nominalQuota: 1\n",
		wantInError: []string{"spec.resourceGroups[0]", "one quota per covered resource"},
	},
	{
		name:        "ClusterQueue with 17 resource groups",
		invalid:     cqHeader + "spec:\n  resourceGroups:\n" + manyGroups(17),
		wantInError: []string{"spec.resourceGroups", "Too many"},
	},
	{
		name:        "ClusterQueue with 65 flavors in a group",
		invalid:     cqHeader + "spec:\n  resourceGroups:\n" + manyFlavors(65),
		wantInError: []string{"spec.resourceGroups[0].flavors", "Too many"},
	},
	{
		name:        "ClusterQueue borrowWithinCohort without reclaimWithinCohort",
		invalid:     cqHeader + "spec:\n  preemption:\n    reclaimWithinCohort: Never\n    borrowWithinCohort:\n      policy: LowerPriority\n",
		wantInError: []string{"spec.preemption", "borrowWithinCohort.policy must be Never"},
	},
	{
		name:        "ClusterQueue fungibility preference with MayStopSearch",
		invalid:     cqHeader + "spec:\n  flavorFungibility:\n    preference: PreemptionOverBorrowing\n",
		wantInError: []string{"spec.flavorFungibility", "preference is only allowed"},
	},
	{
		name:        "ClusterQueue cohortName that is not a DNS subdomain",
		invalid:     cqHeader + "spec:\n  cohortName: Team_A\n",
		wantInError: []string{"spec.cohortName", "should match"},
	},
	{
		name:        "Cohort borrowingLimit without a parent",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: root\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default\n      resources:\n      - name: cpu\n        nominalQuota: 4\n        borrowingLimit: 1\n",
		wantInError: []string{"spec", "can only be set when parentName is set"},
	},
	{
		name:        "LocalQueue clusterQueue changed",
		before:      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\n  namespace: default\nspec:\n  clusterQueue: first\n",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\n  namespace: default\nspec:\n  clusterQueue: second\n",
		wantInError: []string{"spec.clusterQueue", "cannot be changed"},
	},
	{
		name:        "ResourceFlavor with 9 node labels",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: rf\nspec:\n  nodeLabels: {a: x, b: x, c: x, d: x, e: x, f: x, g: x, h: x, i: x}\n",
		wantInError: []string{"spec.nodeLabels", "Too many"},
	},
	{
		name:        "ResourceFlavor taint with an unknown effect",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: rf\nspec:\n  nodeTaints:\n  - key: spot\n    value: \"true\"\n    effect: Sometimes\n",
		wantInError: []string{"spec.nodeTaints", "NoSchedule, PreferNoSchedule, NoExecute"},
	},
	{
		name:        "ResourceFlavor toleration Exists with a value",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: rf\nspec:\n  tolerations:\n  - key: spot\n    operator: Exists\n    value: \"true\"\n",
		wantInError: []string{"spec.tolerations", "value must be empty when operator is Exists"},
	},
	{
		name:        "ResourceFlavor topologyName changed",
		before:      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: rf\nspec:\n  nodeLabels: {pool: a}\n  topologyName: racks\n",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: rf\nspec:\n  nodeLabels: {pool: a}\n  topologyName: blocks\n",
		wantInError: []string{"spec", "topologyName cannot be changed"},
	},
	{
		name:        "AdmissionCheck without controllerName",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: ac\nspec: {}\n",
		wantInError: []string{"spec.controllerName", "Required"},
	},
	{
		name:        "AdmissionCheck controllerName changed",
		before:      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: ac\nspec:\n  controllerName: example.com/a\n",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: ac\nspec:\n  controllerName: example.com/b\n",
		wantInError: []string{"spec.controllerName", "cannot be changed"},
	},
	{
		name:        "Workload minCount above count",
		invalid:     workloadHeader + "spec:\n  podSets:\n  - name: main\n    count: 2\n    minCount: 3\n" + podTemplate,
		wantInError: []string{"spec.podSets[0]", "minCount must not exceed count"},
	},
	{
		name:        "Workload priorityClassRef without priority",
		invalid:     workloadHeader + "spec:\n  priorityClassRef:\n    group: kueue.x-k8s.io\n    kind: WorkloadPriorityClass\n    name: high\n  podSets:\n  - name: main\n" + podTemplate,
		wantInError: []string{"spec", "priority must be set when priorityClassRef is set"},
	},
	{
		name:        "Workload priorityClassRef kind not matching its group",
		invalid:     workloadHeader + "spec:\n  priority: 5\n  priorityClassRef:\n    group: scheduling.k8s.io\n    kind: WorkloadPriorityClass\n    name: high\n  podSets:\n  - name: main\n" + podTemplate,
		wantInError: []string{"spec.priorityClassRef", "requires kind PriorityClass"},
	},
	{
		name:        "Workload admission without one assignment per PodSet",
		before:      workloadHeader + "spec:\n  podSets:\n  - name: main\n" + podTemplate + "  - name: workers\n" + podTemplate,
		invalid:     workloadHeader + "status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n    - name: main\n      count: 1\n  conditions:\n  - type: QuotaReserved\n    status: \"True\"\n    reason: QuotaReserved\n    message: reserved\n    lastTransitionTime: \"2026-01-01T00:00:00Z\"\n",
		status:      true,
		wantInError: []string{"podSetAssignments needs one entry per spec.podSets entry"},
	},
	{
		name:         "Workload queueName changed while quota is reserved",
		before:       workloadHeader + "spec:\n  queueName: first\n  podSets:\n  - name: main\n" + podTemplate,
		statusBefore: workloadHeader + "status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n    - name: main\n      count: 1\n  conditions:\n  - type: QuotaReserved\n    status: \"True\"\n    reason: QuotaReserved\n    message: reserved\n    lastTransitionTime: \"2026-01-01T00:00:00Z\"\n",
		invalid:      workloadHeader + "spec:\n  queueName: second\n  podSets:\n  - name: main\n" + podTemplate,
		wantInError:  []string{"queueName cannot change while quota is reserved"},
	},
	{
		name:        "Topology with hostname above another level",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata:\n  name: topo\nspec:\n  levels:\n  - nodeLabel: kubernetes.io/hostname\n  - nodeLabel: example.com/rack\n",
		wantInError: []string{"spec.levels", "kubernetes.io/hostname may only be the lowest level"},
	},
	{
		name:        "MultiKueueConfig with a repeated cluster",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\nmetadata:\n  name: mk\nspec:\n  clusters: [a, b, a]\n",
		wantInError: []string{"spec.clusters", "must not repeat"},
	},
	{
		name:        "MultiKueueCluster with both cluster sources",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\nmetadata:\n  name: mkc\nspec:\n  clusterSource:\n    kubeConfig:\n      location: worker1\n    clusterProfileRef:\n      name: worker1\n",
		wantInError: []string{"spec.clusterSource", "exactly one of kubeConfig and clusterProfileRef"},
	},
	{
		name:        "WorkloadPriorityClass without value",
		invalid:     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: wpc\ndescription: no value\n",
		wantInError: []string{"value", "Required"},
	},
}

// TestInvalidObjectsAreRejected checks that the API server rejects each
// invalid object with an error naming the offending field.
func TestInvalidObjectsAreRejected(t *testing.T) {
	if len(invalidCases) < 20 {
		t.Fatalf("the table must keep at least 20 cases, has %d", len(invalidCases))
	}
	ctx := context.Background()
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			invalid := mustDecode(t, tc.invalid)
			cleanup := []string{tc.before, tc.invalid}
			defer func() {
				for _, m := range cleanup {
					if m != "" {
						objs, _ := decodeObjects([]byte(m))
						deleteAndWait(ctx, t, objs)
					}
				}
			}()
			if tc.before != "" {
				if err := serverSideApply(ctx, mustDecode(t, tc.before)); err != nil {
					t.Fatalf("creating the valid object first: %v", err)
				}
			}
			if tc.statusBefore != "" {
				if err := applyStatus(ctx, mustDecode(t, tc.statusBefore)); err != nil {
					t.Fatalf("setting the valid status first: %v", err)
				}
			}
			var err error
			if tc.status {
				err = applyStatus(ctx, invalid)
			} else {
				err = serverSideApply(ctx, invalid)
			}
			if err == nil {
				t.Fatalf("the API server accepted the invalid object")
			}
			for _, want := range tc.wantInError {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q:\n%v", want, err)
				}
			}
		})
	}
}

func applyStatus(ctx context.Context, obj *unstructured.Unstructured) error {
	return env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
		client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// TestInvalidConfigurationFileIsRejected checks the configuration loader the
// same way: an invalid file is refused with an error naming the field.
func TestInvalidConfigurationFileIsRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	content := "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations:\n  frameworks: [\"batch/job\", \"example.com/unknown\"]\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := configapi.Load(path)
	if err == nil || !strings.Contains(err.Error(), "integrations.frameworks[1]") {
		t.Fatalf("want an error naming integrations.frameworks[1], got %v", err)
	}
}
