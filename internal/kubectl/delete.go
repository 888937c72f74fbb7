package kubectl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// delete workload: deletes the jobs that own the Workloads (the garbage
// collector then deletes the Workloads), or the Workloads that have no
// owner. The other kinds of delete pass through to kubectl.

func newDeleteCommand(k *kit) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete the resource",
		Long:  "Delete a Workload and the job it belongs to; the other Kueue kinds are deleted by kubectl.",
	}
	cmd.AddCommand(newDeleteWorkloadCommand(k))
	cmd.AddCommand(passThroughKinds(k, "delete", "workload")...)
	return cmd
}

// owner is a workload's owning object, as a resource to delete.
type owner struct {
	gvr  schema.GroupVersionResource
	name string
	uid  types.UID
}

func (o owner) String() string { return o.gvr.GroupResource().String() + "/" + o.name }

type deleteWorkloadFlags struct {
	yes, all, allNamespaces bool
	dryRun                  string
}

func newDeleteWorkloadCommand(k *kit) *cobra.Command {
	var f deleteWorkloadFlags
	cmd := &cobra.Command{
		Use:                   "workload NAME [--yes] [--all] [--dry-run STRATEGY]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"wl", "kwl", "kueueworkload", "kueueworkloads"},
		Short:                 "Delete the given Workload and its corresponding Job",
		Long: `If the Workload has associated Jobs, the command asks for approval to delete
the Jobs, and deletes them; the garbage collector then deletes the Workload.
If there are no associated Jobs, the command deletes the Workload.`,
		Example: "  kubectl kuota delete workload my-workload --yes",
	}
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "Automatic yes to the prompt for deleting the Workload.")
	cmd.Flags().BoolVar(&f.all, "all", false, "Delete all Workloads, in the specified namespace.")
	addAllNamespacesFlag(cmd, &f.allNamespaces)
	addDryRunFlag(cmd, &f.dryRun)
	p := newObjectPrinter(cmd, "deleted")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case !f.all && len(args) == 0:
			return errors.New("give at least one Workload name, or --all")
		case f.all && len(args) > 0:
			return errors.New("--all deletes every Workload: give no name with it")
		case f.allNamespaces && len(args) > 0:
			return errors.New("--all-namespaces: a Workload cannot be deleted by name across all namespaces")
		}
		d, err := parseDryRun(f.dryRun)
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		return deleteWorkloads(cmd.Context(), k, s, p, &f, d, args)
	}
	return cmd
}

func deleteWorkloads(ctx context.Context, k *kit, s *session, p *objectPrinter, f *deleteWorkloadFlags, d dryRun, names []string) error {
	wls, err := workloadsToDelete(ctx, k, s, f, names)
	if err != nil || len(wls) == 0 {
		return err
	}
	owners := make([][]owner, len(wls))
	anyOwner := false
	for i := range wls {
		if owners[i], err = ownersOf(k, &wls[i]); err != nil {
			return err
		}
		anyOwner = anyOwner || len(owners[i]) > 0
	}
	if d == dryRunNone && !f.yes && anyOwner {
		msg := "This operation will also delete the jobs associated with these workloads.\n"
		if !f.all {
			msg = confirmationMessage(wls, owners)
		}
		if !confirm(k, msg) {
			fmt.Fprintln(k.opts.Out, "Deletion is canceled")
			return nil
		}
	}
	dyn, err := dynamic.NewForConfig(s.config)
	if err != nil {
		return fmt.Errorf("creating the dynamic client: %w", err)
	}
	for i := range wls {
		wl := &wls[i]
		for _, o := range owners[i] {
			if d != dryRunClient {
				opts := metav1.DeleteOptions{DryRun: d.serverDryRun(), Preconditions: &metav1.Preconditions{UID: &o.uid},
					PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)}
				err := dyn.Resource(o.gvr).Namespace(wl.Namespace).Delete(ctx, o.name, opts)
				if err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("deleting %s: %w", o, err)
				}
			}
			fmt.Fprintf(k.opts.Out, "%s deleted%s\n", o, dryRunSuffix(d))
		}
		if len(owners[i]) > 0 {
			continue
		}
		if d != dryRunClient {
			err := s.client.Delete(ctx, wl, &client.DeleteOptions{DryRun: d.serverDryRun()})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Workload %s/%s: %w", wl.Namespace, wl.Name, err)
			}
		}
		if err := p.print(d, wl, k); err != nil {
			return err
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

func dryRunSuffix(d dryRun) string {
	switch d {
	case dryRunClient:
		return " (client dry run)"
	case dryRunServer:
		return " (server dry run)"
	}
	return ""
}

// workloadsToDelete reads the named Workloads (reporting the missing ones
// on stderr) or, with --all, every Workload of the namespace.
func workloadsToDelete(ctx context.Context, k *kit, s *session, f *deleteWorkloadFlags, names []string) ([]kueue.Workload, error) {
	if f.all {
		ns := s.namespace
		if f.allNamespaces {
			ns = ""
		}
		var all, page kueue.WorkloadList
		opts := []client.ListOption{client.Limit(listPageSize), client.InNamespace(ns)}
		err := listAll(ctx, s, &page, opts, func() { all.Items = append(all.Items, page.Items...) })
		return all.Items, err
	}
	var out []kueue.Workload
	for _, name := range names {
		var wl kueue.Workload
		err := s.client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, &wl)
		if apierrors.IsNotFound(err) {
			fmt.Fprintf(k.opts.Err, "Error from server (NotFound): workloads.kueue.x-k8s.io %q not found\n", name)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, wl)
	}
	return out, nil
}

// ownersOf maps the workload's owner references to resources.
func ownersOf(k *kit, wl *kueue.Workload) ([]owner, error) {
	if len(wl.OwnerReferences) == 0 {
		return nil, nil
	}
	mapper, err := k.flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("building the REST mapper: %w", err)
	}
	out := make([]owner, 0, len(wl.OwnerReferences))
	for _, r := range wl.OwnerReferences {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("owner %s of Workload %s/%s: %w", r.Name, wl.Namespace, wl.Name, err)
		}
		m, err := mapper.RESTMapping(gv.WithKind(r.Kind).GroupKind(), gv.Version)
		if err != nil {
			return nil, fmt.Errorf("owner %s %s of Workload %s/%s: %w", r.Kind, r.Name, wl.Namespace, wl.Name, err)
		}
		out = append(out, owner{gvr: m.Resource, name: r.Name, uid: r.UID})
	}
	return out, nil
}

func confirmationMessage(wls []kueue.Workload, owners [][]owner) string {
	var lines []string
	for i := range wls {
		if len(owners[i]) == 0 {
			continue
		}
		names := make([]string, len(owners[i]))
		for j, o := range owners[i] {
			names[j] = o.String()
		}
		lines = append(lines, fmt.Sprintf("  - %s associated with the %s/%s workload\n", strings.Join(names, ", "), wls[i].Namespace, wls[i].Name))
	}
	return "This operation will also delete:\n" + strings.Join(lines, "\n")
}

// confirm asks on stdout and reads y or n from stdin.
func confirm(k *kit, msg string) bool {
	fmt.Fprint(k.opts.Out, msg, "Do you want to proceed (y/n)? ")
	var answer string
	if _, err := fmt.Fscan(bufio.NewReader(k.opts.In), &answer); err != nil {
		return false
	}
	return strings.EqualFold(answer, "y")
}
