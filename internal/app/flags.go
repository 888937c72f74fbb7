package app

import (
	"flag"
	"os"
	"strings"
)

// DropImportedTestFlags removes from the process's flag set the flags that
// test frameworks register when merely imported: cluster-autoscaler's
// ProvisioningRequest API package imports Ginkgo, which adds its
// "ginkgo.*" flags and its own usage text to flag.CommandLine. Call it
// before defining the binary's flags.
func DropImportedTestFlags() {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "ginkgo.") {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	flag.CommandLine = fs
}
