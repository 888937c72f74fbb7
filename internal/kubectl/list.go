package kubectl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// list clusterqueue|localqueue|workload|resourceflavor|pods.

func newListCommand(k *kit) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Display resources",
		Long:  "List ClusterQueues, LocalQueues, Workloads, ResourceFlavors or the Pods of a job.",
	}
	cmd.AddCommand(newListClusterQueueCommand(k), newListLocalQueueCommand(k), newListWorkloadCommand(k),
		newListResourceFlavorCommand(k), newListPodsCommand(k))
	return cmd
}

// listPageSize is how many objects one list request returns at most.
const listPageSize = 100

// listFlags are the flags every list command has.
type listFlags struct {
	selector, fieldSelector string
	allNamespaces           bool
	output                  *objectPrinter
}

// addListFlags adds -l, --field-selector, -o and, for namespaced kinds, -A.
func addListFlags(cmd *cobra.Command, f *listFlags, namespaced bool) {
	addLabelSelectorFlag(cmd, &f.selector)
	addFieldSelectorFlag(cmd, &f.fieldSelector)
	if namespaced {
		addAllNamespacesFlag(cmd, &f.allNamespaces)
	}
	f.output = newObjectPrinter(cmd, "")
}

// options are the list options of the flags, in namespace ns ("" for all).
func (f *listFlags) options(ns string) ([]client.ListOption, error) {
	opts := []client.ListOption{client.Limit(listPageSize)}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if f.selector != "" {
		sel, err := labels.Parse(f.selector)
		if err != nil {
			return nil, fmt.Errorf("invalid --selector %q: %w", f.selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if f.fieldSelector != "" {
		sel, err := fields.ParseSelector(f.fieldSelector)
		if err != nil {
			return nil, fmt.Errorf("invalid --field-selector %q: %w", f.fieldSelector, err)
		}
		opts = append(opts, client.MatchingFieldsSelector{Selector: sel})
	}
	return opts, nil
}

// namespace is the namespace to list in: "" with -A.
func (f *listFlags) namespace(s *session) string {
	if f.allNamespaces {
		return ""
	}
	return s.namespace
}

// pagedList is a list kind whose pages listAll walks.
type pagedList interface {
	client.ObjectList
	GetContinue() string
}

// listAll fills list with every page, calling keep on each page to append
// what it keeps.
func listAll(ctx context.Context, s *session, list pagedList, opts []client.ListOption, keep func()) error {
	cont := ""
	for {
		page := append(append([]client.ListOption{}, opts...), client.Continue(cont))
		if err := s.client.List(ctx, list, page...); err != nil {
			return err
		}
		keep()
		if cont = list.GetContinue(); cont == "" {
			return nil
		}
	}
}

// printOutput prints list in the format of -o when it was given, and
// reports whether it did.
func (f *listFlags) printOutput(k *kit, list runtime.Object) (bool, error) {
	if !f.output.flags.OutputFlagSpecified() {
		return false, nil
	}
	if f.output.flags.OutputFormat == nil || *f.output.flags.OutputFormat != "name" {
		return true, f.output.print(dryRunNone, list, k)
	}
	// The name printer takes one object at a time.
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return true, fmt.Errorf("--output name: %w", err)
	}
	for _, it := range items {
		if err := f.output.print(dryRunNone, it, k); err != nil {
			return true, err
		}
	}
	return true, nil
}
