package kubectl

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// The flags several commands share, with kueuectl's names and help.

func addLabelSelectorFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "selector", "l", "",
		"Selector (label query) to filter on, supports '=', '==', and '!='.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
}

func addFieldSelectorFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "field-selector", "",
		"Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
}

func addAllNamespacesFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVarP(p, "all-namespaces", "A", false,
		"If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
}

func addClusterQueueFilterFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "clusterqueue", "c", "", "Filter by cluster queue name which is associated with the resource.")
}

func addForFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "for", "", "Filter to only those pertaining to the specified resource, TYPE[.API-GROUP]/NAME.")
}

// dryRun is the --dry-run strategy.
type dryRun string

const (
	dryRunNone   dryRun = "none"
	dryRunClient dryRun = "client"
	dryRunServer dryRun = "server"
)

func addDryRunFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "dry-run", string(dryRunNone),
		`Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
}

func parseDryRun(s string) (dryRun, error) {
	switch d := dryRun(s); d {
	case dryRunNone, dryRunClient, dryRunServer:
		return d, nil
	}
	return "", fmt.Errorf(`invalid --dry-run value %q: must be "none", "server" or "client"`, s)
}

// serverDryRun is the API's dryRun option for the strategy.
func (d dryRun) serverDryRun() []string {
	if d == dryRunServer {
		return []string{"All"}
	}
	return nil
}

// objectPrinter prints changed objects as kubectl does: "kind.group/name
// <operation>", or in the format of --output.
type objectPrinter struct {
	flags *genericclioptions.PrintFlags
}

func newObjectPrinter(cmd *cobra.Command, operation string) *objectPrinter {
	scheme, err := newScheme()
	if err != nil {
		panic(err) // the scheme is built from compiled-in types only
	}
	p := &objectPrinter{flags: genericclioptions.NewPrintFlags(operation).WithTypeSetter(scheme)}
	p.flags.AddFlags(cmd)
	return p
}

// printer returns the printer, with the operation marked as a dry run.
func (p *objectPrinter) printer(d dryRun) (printers.ResourcePrinter, error) {
	switch d {
	case dryRunClient:
		if err := p.flags.Complete("%s (dry run)"); err != nil {
			return nil, err
		}
	case dryRunServer:
		if err := p.flags.Complete("%s (server dry run)"); err != nil {
			return nil, err
		}
	}
	pr, err := p.flags.ToPrinter()
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	return pr, nil
}

// print writes obj with the printer.
func (p *objectPrinter) print(d dryRun, obj runtime.Object, k *kit) error {
	pr, err := p.printer(d)
	if err != nil {
		return err
	}
	return pr.PrintObj(obj, k.opts.Out)
}
