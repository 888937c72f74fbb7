// Package cli holds the commands of the kuota command-line tool, which is
// also installed as the kubectl plugin kubectl-kuota. Each command group
// lives in its own file and is added in NewRootCommand; commands parse and
// validate flags into the options of an internal package and do no work of
// their own.
package cli

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kuota-dev/kuota/internal/kubectl"
)

// Env is what the commands take from the process: streams, the working
// directory, the user's cache folder and environment variables. main fills it
// from package os; tests fill it by hand.
type Env struct {
	// In is read by the commands that ask (delete workload's confirmation).
	In           io.Reader
	Out          io.Writer
	Err          io.Writer
	WorkingDir   string
	UserCacheDir string
	Getenv       func(string) string
}

// kubectlPluginPrefix is how kubectl finds plugins: kubectl-kuota is run as
// `kubectl kuota`.
const kubectlPluginPrefix = "kubectl-"

// CommandName is the name to show in usage for a program started as argv0:
// "kubectl kuota" for the kubectl plugin, else the file's base name.
func CommandName(argv0 string) string {
	base := filepath.Base(argv0)
	base = strings.TrimSuffix(base, ".exe")
	if rest, ok := strings.CutPrefix(base, kubectlPluginPrefix); ok && rest != "" {
		return "kubectl " + rest
	}
	if base == "" || base == "." || base == string(filepath.Separator) {
		return "kuota"
	}
	return base
}

// NewRootCommand builds the command tree; name is the program's name as
// shown in usage and examples (see CommandName).
func NewRootCommand(name string, env Env) *cobra.Command {
	root := &cobra.Command{
		Use:         "kuota",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: name},
		Short:       "Kuota is a Kubernetes job-queueing controller, a drop-in replacement for Kueue",
		Long: `Kuota is a Kubernetes job-queueing controller that serves the Kueue API
(kueue.x-k8s.io/v1beta2): it queues jobs, admits them when quota allows and
explains what the queue is doing. This tool drives it from the command line.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(env.Out)
	root.SetErr(env.Err)
	root.AddCommand(newDevCommand(name, env), newAuditCommand(name, env, nil), newDemoCommand(name, env, nil),
		newSimulateCommand(name, env), newTraceCommand(name, env, nil))
	// Kueue's kubectl plugin commands (kueuectl): create, list, stop, resume,
	// delete, version and the pass-through of get/describe/edit/patch; and
	// Kuota's why and top, with the same connection flags.
	kubectl.AddCommands(root, kubectl.Options{In: env.In, Out: env.Out, Err: env.Err})
	return root
}
