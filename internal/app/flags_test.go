package app

import (
	"flag"
	"strings"
	"testing"
)

func TestDropImportedTestFlags(t *testing.T) {
	saved := flag.CommandLine
	defer func() { flag.CommandLine = saved }()
	flag.CommandLine = flag.NewFlagSet("x", flag.ContinueOnError)
	flag.String("ginkgo.seed", "", "")
	flag.String("kubeconfig", "", "path")
	DropImportedTestFlags()
	if flag.Lookup("ginkgo.seed") != nil {
		t.Error("a ginkgo flag survived")
	}
	if f := flag.Lookup("kubeconfig"); f == nil || !strings.Contains(f.Usage, "path") {
		t.Error("other flags must be kept")
	}
}
