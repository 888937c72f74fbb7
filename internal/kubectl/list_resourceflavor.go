package kubectl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// list resourceflavor.

func newListResourceFlavorCommand(k *kit) *cobra.Command {
	var f listFlags
	cmd := &cobra.Command{
		Use:                   "resourceflavor [--selector KEY=VALUE] [--field-selector KEY=VALUE]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"rf"},
		Short:                 "List ResourceFlavor",
		Long:                  "Lists ResourceFlavors that match the label selector or the field selector.",
		Example:               "  kubectl kuota list resourceflavor -l team=a",
		Args:                  cobra.NoArgs,
	}
	addListFlags(cmd, &f, false)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		opts, err := f.options("")
		if err != nil {
			return err
		}
		s, err := k.connect()
		if err != nil {
			return err
		}
		var all, page kueue.ResourceFlavorList
		if err := listAll(cmd.Context(), s, &page, opts, func() { all.Items = append(all.Items, page.Items...) }); err != nil {
			return err
		}
		if done, err := f.printOutput(k, &all); done {
			return err
		}
		if len(all.Items) == 0 {
			noResources(k, false, false, "")
			return nil
		}
		now := k.opts.Now()
		t := table{columns: []column{{"Name", "string"}, {"Node Labels", "string"}, {"Age", "string"}}}
		for i := range all.Items {
			rf := &all.Items[i]
			t.add(rf, rf.Name, nodeLabels(rf.Spec.NodeLabels), age(now, rf.CreationTimestamp))
		}
		return t.print(k, false)
	}
	return cmd
}

// nodeLabels renders labels as "k1=v1, k2=v2", sorted.
func nodeLabels(m map[string]string) string {
	out := make([]string, 0, len(m))
	for key, v := range m {
		out = append(out, fmt.Sprintf("%s=%s", key, v))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
