package kubectl

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// list workload.

// Workload statuses, as the STATUS column shows them (upper-cased) and as
// --status takes them.
const (
	statusAll           = "all"
	statusPending       = "pending"
	statusQuotaReserved = "quotareserved"
	statusAdmitted      = "admitted"
	statusFinished      = "finished"
)

// workloadStatus is the most advanced state a workload reached.
func workloadStatus(wl *kueue.Workload) string {
	switch c := wl.Status.Conditions; {
	case apimeta.IsStatusConditionTrue(c, kueue.WorkloadFinished):
		return statusFinished
	case apimeta.IsStatusConditionTrue(c, kueue.WorkloadAdmitted):
		return statusAdmitted
	case apimeta.IsStatusConditionTrue(c, kueue.WorkloadQuotaReserved):
		return statusQuotaReserved
	}
	return statusPending
}

func parseStatuses(values []string) (sets.Set[string], error) {
	out := sets.New[string]()
	for _, v := range values {
		switch s := strings.ToLower(v); s {
		case statusAll, statusPending, statusQuotaReserved, statusAdmitted, statusFinished:
			out.Insert(s)
		default:
			return nil, fmt.Errorf(`invalid --status value %q: must be "all", "pending", "quotareserved", "admitted" or "finished"`, v)
		}
	}
	return out, nil
}

type workloadFilter struct {
	clusterQueue, localQueue string
	statuses                 sets.Set[string]
	ownerUID                 types.UID
}

func (f *workloadFilter) keep(wl *kueue.Workload) bool {
	if f.localQueue != "" && string(wl.Spec.QueueName) != f.localQueue {
		return false
	}
	if f.clusterQueue != "" && (wl.Status.Admission == nil || string(wl.Status.Admission.ClusterQueue) != f.clusterQueue) {
		return false
	}
	if f.ownerUID != "" && !ownedBy(wl, f.ownerUID) {
		return false
	}
	return f.statuses.Len() == 0 || f.statuses.Has(statusAll) || f.statuses.Has(workloadStatus(wl))
}

func ownedBy(obj metav1.Object, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func newListWorkloadCommand(k *kit) *cobra.Command {
	var f listFlags
	var filter workloadFilter
	var statuses []string
	var forObject string
	cmd := &cobra.Command{
		Use: "workload [--clusterqueue CLUSTER_QUEUE_NAME] [--localqueue LOCAL_QUEUE_NAME] [--status STATUS] " +
			"[--selector KEY=VALUE] [--field-selector KEY=VALUE] [--all-namespaces] [--for TYPE[.API-GROUP]/NAME]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"wl", "kwl", "kueueworkload", "kueueworkloads"},
		Short:                 "List Workload",
		Long:                  "Lists Workloads that match the provided criteria. POSITION IN QUEUE, the position of a pending workload in its LocalQueue, comes from the visibility API; it is empty when that API is not served.",
		Example:               "  kubectl kuota list workload -A --status pending\n  kubectl kuota list workload --for job/my-job",
		Args:                  cobra.NoArgs,
	}
	addListFlags(cmd, &f, true)
	addClusterQueueFilterFlag(cmd, &filter.clusterQueue)
	cmd.Flags().StringVarP(&filter.localQueue, "localqueue", "q", "", "Filter by local queue name which is associated with the resource.")
	cmd.Flags().StringArrayVar(&statuses, "status", nil, `Filter workloads by status. Must be "all", "pending", "quotareserved", "admitted" or "finished"`)
	addForFlag(cmd, &forObject)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var err error
		if filter.statuses, err = parseStatuses(statuses); err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if forObject != "" {
			owner, err := k.resolveFor(ctx, s, forObject, f.allNamespaces)
			if err != nil {
				return err
			}
			if owner == nil {
				noResources(k, true, f.allNamespaces, s.namespace)
				return nil
			}
			filter.ownerUID = owner.GetUID()
		}
		opts, err := f.options(f.namespace(s))
		if err != nil {
			return err
		}
		var all, page kueue.WorkloadList
		err = listAll(ctx, s, &page, opts, func() {
			for i := range page.Items {
				if filter.keep(&page.Items[i]) {
					all.Items = append(all.Items, page.Items[i])
				}
			}
		})
		if err != nil {
			return err
		}
		if done, err := f.printOutput(k, &all); done {
			return err
		}
		if len(all.Items) == 0 {
			noResources(k, true, f.allNamespaces, s.namespace)
			return nil
		}
		t, err := workloadTable(ctx, k, s, all.Items)
		if err != nil {
			return err
		}
		return t.print(k, f.allNamespaces)
	}
	return cmd
}

// workloadTable reads what the columns need besides the workloads (their
// LocalQueues, positions and owners' kinds) and builds the table.
func workloadTable(ctx context.Context, k *kit, s *session, wls []kueue.Workload) (*table, error) {
	cqOf, err := clusterQueuesOf(ctx, s, wls)
	if err != nil {
		return nil, err
	}
	pendingCQs := sets.New[string]()
	for i := range wls {
		if workloadStatus(&wls[i]) == statusPending && cqOf[i] != "" {
			pendingCQs.Insert(cqOf[i])
		}
	}
	positions, err := fetchPositions(ctx, s.clientset.Discovery().RESTClient(), sets.List(pendingCQs))
	if err != nil {
		return nil, err
	}
	kinds := jobTypes{s: s, cache: map[string]*metav1.APIResourceList{}}
	now := k.opts.Now()
	t := &table{columns: []column{{"Name", "string"}, {"Job Type", "string"}, {"Job Name", "string"},
		{"LocalQueue", "string"}, {"ClusterQueue", "string"}, {"Status", "string"}, {"Position in Queue", "string"},
		{"Exec Time", "string"}, {"Age", "string"}}}
	for i := range wls {
		wl := &wls[i]
		pos := ""
		if workloadStatus(wl) == statusPending {
			pos = positions.cell(wl.Namespace, wl.Name)
		}
		t.add(wl, wl.Name, kinds.of(wl), ownerNames(wl), string(wl.Spec.QueueName), cqOf[i],
			strings.ToUpper(workloadStatus(wl)), pos, execTime(wl, now), age(now, wl.CreationTimestamp))
	}
	return t, nil
}

// clusterQueuesOf gives each workload's ClusterQueue: the one it is
// admitted to, else the one its LocalQueue points to ("" when unknown).
func clusterQueuesOf(ctx context.Context, s *session, wls []kueue.Workload) ([]string, error) {
	out := make([]string, len(wls))
	lqs := map[string]string{}
	for i := range wls {
		wl := &wls[i]
		if wl.Status.Admission != nil && wl.Status.Admission.ClusterQueue != "" {
			out[i] = string(wl.Status.Admission.ClusterQueue)
			continue
		}
		key := wl.Namespace + "/" + string(wl.Spec.QueueName)
		cq, seen := lqs[key]
		if !seen && wl.Spec.QueueName != "" {
			var lq kueue.LocalQueue
			err := s.client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &lq)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("reading LocalQueue %s: %w", key, err)
			}
			cq = string(lq.Spec.ClusterQueue)
			lqs[key] = cq
		}
		out[i] = cq
	}
	return out, nil
}

// execTime is how long an admitted workload has run (until it finished).
func execTime(wl *kueue.Workload, now time.Time) string {
	admitted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if admitted == nil || admitted.Status != metav1.ConditionTrue {
		return ""
	}
	end := now
	if fin := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); fin != nil && fin.Status == metav1.ConditionTrue {
		end = fin.LastTransitionTime.Time
	}
	return duration.HumanDuration(end.Sub(admitted.LastTransitionTime.Time))
}

func ownerNames(wl *kueue.Workload) string {
	names := sets.New[string]()
	for _, r := range wl.OwnerReferences {
		names.Insert(r.Name)
	}
	return strings.Join(sets.List(names), ", ")
}

// jobTypeMaxLength is the width at which JOB TYPE is cut, as in kueuectl.
const jobTypeMaxLength = 20

// jobTypes names the kinds of workloads' owners as kubectl resources
// ("job.batch"), from discovery.
type jobTypes struct {
	s     *session
	cache map[string]*metav1.APIResourceList
}

func (j *jobTypes) of(wl *kueue.Workload) string {
	out := sets.New[string]()
	for _, r := range wl.OwnerReferences {
		if name := j.resourceName(r.APIVersion, r.Kind); name != "" {
			out.Insert(name)
		}
	}
	list := sets.List(out)
	sort.Strings(list)
	return strings.Join(list, ", ")
}

func (j *jobTypes) resourceName(apiVersion, kind string) string {
	list, seen := j.cache[apiVersion]
	if !seen {
		// An unknown group (its CRD gone) leaves the cell empty.
		list, _ = j.s.clientset.Discovery().ServerResourcesForGroupVersion(apiVersion)
		j.cache[apiVersion] = list
	}
	if list == nil {
		return ""
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	for _, r := range list.APIResources {
		if r.Kind != kind || r.SingularName == "" || strings.Contains(r.Name, "/") {
			continue
		}
		name := r.SingularName
		if g := r.Group; g != "" {
			group = g
		}
		if group != "" {
			name += "." + group
		}
		if len(name) > jobTypeMaxLength {
			name = name[:jobTypeMaxLength] + "..."
		}
		return name
	}
	return ""
}
