package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kuota-dev/kuota/internal/integrations/all"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// list pods --for TYPE[.API-GROUP]/NAME: the pods of a job, in kubectl's
// columns (the API server's table for pods).

func newListPodsCommand(k *kit) *cobra.Command {
	var f listFlags
	var forSpec string
	cmd := &cobra.Command{
		Use:                   "pods --for TYPE[.API-GROUP]/NAME",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"po", "pod"},
		Short:                 "List Pods belong to a Job Kind",
		Long:                  "Lists all pods that match the given criteria: part of the specified job, in the specified namespace, matching the label selector or the field selector.",
		Example:               "  kubectl kuota list pods --for job/my-job\n  kubectl kuota list pods --for jobset.jobset.x-k8s.io/my-jobset",
		Args:                  cobra.NoArgs,
	}
	addListFlags(cmd, &f, true)
	addForFlag(cmd, &forSpec)
	_ = cmd.MarkFlagRequired("for")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, err := k.connect()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		job, err := k.resolveFor(ctx, s, forSpec, f.allNamespaces)
		if err != nil {
			return err
		}
		if job == nil {
			noResources(k, true, f.allNamespaces, s.namespace)
			return nil
		}
		if _, err := f.options(""); err != nil { // validates --selector and --field-selector
			return err
		}
		rows, err := podRows(ctx, s, job, f.selector, f.fieldSelector, k.opts.Now())
		if err != nil {
			return err
		}
		if rows == nil || len(rows.Rows) == 0 {
			noResources(k, true, f.allNamespaces, job.GetNamespace())
			return nil
		}
		if f.output.flags.OutputFlagSpecified() {
			return printPodObjects(ctx, k, s, &f, rows)
		}
		w := printers.GetNewTabWriter(k.opts.Out)
		if err := printers.NewTablePrinter(printers.PrintOptions{WithNamespace: f.allNamespaces}).PrintObj(rows, w); err != nil {
			return fmt.Errorf("printing the pods: %w", err)
		}
		return w.Flush()
	}
	return cmd
}

// podFinder finds the job's pods as the job framework does: those
// labelled with its UID (including the pods of its child objects), those
// it controls, and those its integration's pod selector selects.
func podFinder(job *forObject) jobframework.JobPodFinder {
	for _, in := range all.Integrations() {
		if in.GVK.GroupKind() == job.gvk.GroupKind() && in.NewJob != nil {
			return jobframework.FindJobPods(in, job.GetUID())
		}
	}
	return jobframework.JobPodFinder{UID: job.GetUID()}
}

// podRows asks the API server for the table of the job's pods, with ages
// measured against now: one list per query of the job's finder, each pod
// once.
func podRows(ctx context.Context, s *session, job *forObject, selector, fieldSelector string, now time.Time) (*metav1.Table, error) {
	finder := podFinder(job)
	seen := map[types.UID]bool{}
	keep := func(meta *metav1.PartialObjectMetadata) bool {
		if seen[meta.UID] || !finder.Has(meta) {
			return false
		}
		seen[meta.UID] = true
		return true
	}
	var out *metav1.Table
	for _, q := range finder.Queries() {
		labelSel := selector
		if js := q.String(); js != "" {
			if labelSel != "" {
				labelSel += ","
			}
			labelSel += js
		}
		var err error
		if out, err = listPodRows(ctx, s, job, out, labelSel, fieldSelector, keep, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listPodRows appends to out (a new table when nil) the rows of the pods
// in the job's namespace matching the selectors that keep accepts.
func listPodRows(ctx context.Context, s *session, job *forObject, out *metav1.Table, labelSel, fieldSelector string,
	keep func(*metav1.PartialObjectMetadata) bool, now time.Time) (*metav1.Table, error) {
	cont := ""
	for {
		raw, err := s.clientset.CoreV1().RESTClient().Get().Namespace(job.GetNamespace()).Resource("pods").
			VersionedParams(&metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSelector, Limit: listPageSize, Continue: cont}, metav1.ParameterCodec).
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json").DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the pods of %s %s: %w", job.gvk.Kind, job.GetName(), err)
		}
		var page metav1.Table
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("decoding the pods table: %w", err)
		}
		if out == nil {
			out = &metav1.Table{ColumnDefinitions: page.ColumnDefinitions}
		}
		if err := keepJobRows(out, &page, keep, now); err != nil {
			return nil, err
		}
		if cont = page.Continue; cont == "" {
			return out, nil
		}
	}
}

// keepJobRows appends page's rows of the pods keep accepts to out, their
// ages recomputed.
func keepJobRows(out, page *metav1.Table, keep func(*metav1.PartialObjectMetadata) bool, now time.Time) error {
	ageColumn := -1
	for i, c := range page.ColumnDefinitions {
		if c.Name == "Age" {
			ageColumn = i
		}
	}
	for _, row := range page.Rows {
		meta := &metav1.PartialObjectMetadata{}
		if err := json.Unmarshal(row.Object.Raw, meta); err != nil {
			return fmt.Errorf("decoding a pod of the table: %w", err)
		}
		if !keep(meta) {
			continue
		}
		row.Object.Object = meta
		if ageColumn >= 0 && ageColumn < len(row.Cells) {
			row.Cells[ageColumn] = age(now, meta.CreationTimestamp)
		}
		out.Rows = append(out.Rows, row)
	}
	return nil
}

// printPodObjects prints the pods of rows in the format of --output.
func printPodObjects(ctx context.Context, k *kit, s *session, f *listFlags, rows *metav1.Table) error {
	list := &corev1.PodList{}
	for _, row := range rows.Rows {
		meta := row.Object.Object.(*metav1.PartialObjectMetadata)
		pod, err := s.clientset.CoreV1().Pods(meta.Namespace).Get(ctx, meta.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		list.Items = append(list.Items, *pod)
	}
	_, err := f.printOutput(k, list)
	return err
}
