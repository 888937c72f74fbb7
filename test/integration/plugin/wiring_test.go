package plugin

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kuota-dev/kuota/internal/cli"
)

// TestKuotaRootHasThePluginCommands runs the kuota binary's root command as
// kubectl starts it (argv[0] kubectl-kuota): the plugin's commands are there
// and usage names the program "kubectl kuota".
func TestKuotaRootHasThePluginCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	name := cli.CommandName("/usr/local/bin/kubectl-kuota")
	root := cli.NewRootCommand(name, cli.Env{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
	root.SetArgs([]string{"list", "clusterqueue", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl kuota list clusterqueue") || !strings.Contains(out.String(), "--kubeconfig") {
		t.Errorf("help of list clusterqueue under kubectl-kuota:\n%s", out.String())
	}
	out.Reset()
	root = cli.NewRootCommand(cli.CommandName("kuota"), cli.Env{Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
	root.SetArgs([]string{"version", "--kubeconfig", kubeconfigFile(t)})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Client Version: ") {
		t.Errorf("kuota version printed %q", out.String())
	}
}
