package kubectl

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
)

// get, describe, edit, patch and delete of Kueue's kinds run kubectl with
// the kind's full resource name (workloads.kueue.x-k8s.io), so that a short
// name another CRD also claims cannot be mistaken, and the rest of the
// arguments and flags unchanged.

// passThroughVerbs are the kubectl verbs passed through; delete has its own
// command (for workloads), to which the other kinds are added.
var passThroughVerbs = []string{"get", "describe", "edit", "patch"}

// kueueKind is a kind the pass-through commands know: its command name,
// aliases and full resource name.
type kueueKind struct {
	name     string
	aliases  []string
	resource string
}

var kueueKinds = []kueueKind{
	{"workload", []string{"wl", "kwl", "kueueworkload", "kueueworkloads", "workloads"}, "workloads.kueue.x-k8s.io"},
	{"clusterqueue", []string{"cq", "clusterqueues"}, "clusterqueues.kueue.x-k8s.io"},
	{"localqueue", []string{"lq", "queue", "queues", "localqueues"}, "localqueues.kueue.x-k8s.io"},
	{"resourceflavor", []string{"rf", "flavor", "flavors", "resourceflavors"}, "resourceflavors.kueue.x-k8s.io"},
	{"cohort", []string{"co", "cohorts"}, "cohorts.kueue.x-k8s.io"},
	{"admissioncheck", []string{"ac", "admissionchecks"}, "admissionchecks.kueue.x-k8s.io"},
	{"workloadpriorityclass", []string{"wpc", "workloadpriorityclasses"}, "workloadpriorityclasses.kueue.x-k8s.io"},
	{"topology", []string{"topo", "topologies"}, "topologies.kueue.x-k8s.io"},
	{"provisioningrequestconfig", []string{"prc", "provisioningrequestconfigs"}, "provisioningrequestconfigs.kueue.x-k8s.io"},
	{"multikueuecluster", []string{"mkc", "multikueueclusters"}, "multikueueclusters.kueue.x-k8s.io"},
	{"multikueueconfig", []string{"mkconf", "multikueueconfigs"}, "multikueueconfigs.kueue.x-k8s.io"},
}

func newPassThroughCommands(k *kit) []*cobra.Command {
	out := make([]*cobra.Command, 0, len(passThroughVerbs))
	for _, verb := range passThroughVerbs {
		cmd := &cobra.Command{
			Use:   verb,
			Short: fmt.Sprintf("Pass-through %q to kubectl", verb),
			Long:  fmt.Sprintf("Runs `kubectl %s` on one of Kueue's kinds, with the arguments and flags given.", verb),
		}
		cmd.AddCommand(passThroughKinds(k, verb, "")...)
		out = append(out, cmd)
	}
	return out
}

// passThroughKinds are the subcommands of verb, one per kind but skip.
func passThroughKinds(k *kit, verb, skip string) []*cobra.Command {
	var out []*cobra.Command
	for _, kind := range kueueKinds {
		if kind.name == skip {
			continue
		}
		out = append(out, &cobra.Command{
			Use:                kind.name,
			Aliases:            kind.aliases,
			Short:              fmt.Sprintf("Pass-through \"%s %s\" to kubectl", verb, kind.name),
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				for _, a := range args {
					if a == "-h" || a == "--help" {
						return cmd.Help()
					}
				}
				return k.runKubectl(cmd, append([]string{verb, kind.resource}, args...))
			},
		})
	}
	return out
}

// runKubectl runs kubectl with args, on the commands' streams.
func (k *kit) runKubectl(cmd *cobra.Command, args []string) error {
	path := k.opts.KubectlPath
	if path == "" {
		var err error
		if path, err = exec.LookPath("kubectl"); err != nil {
			return fmt.Errorf("pass-through commands need kubectl on PATH: %w", err)
		}
	}
	c := exec.CommandContext(cmd.Context(), path, args...)
	c.Stdin, c.Stdout, c.Stderr = k.opts.In, k.opts.Out, k.opts.Err
	if err := c.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return fmt.Errorf("kubectl %s: exit status %d", strings.Join(args[:2], " "), exit.ExitCode())
		}
		return fmt.Errorf("running kubectl: %w", err)
	}
	return nil
}
