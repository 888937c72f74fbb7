// Command kuota-bench runs a scalability scenario against a real
// kube-apiserver and etcd with the Kuota manager as a separate process, and
// prints the run's figures: wall time, time to admission, ClusterQueue
// usage, the manager's CPU, memory and API writes, the auditor's verdict
// and the scenario's targets. Results go to bench/results/<scenario>-<UTC
// time>/ unless --out says otherwise.
//
// With --client, a command of the user's choosing (Kueue's scalability
// runner, say) plays the users and jobs instead of the driver, against the
// same API server and manager; the harness reports the processes, the
// Workloads created and evicted, and the manager's writes.
//
// It exits with status 1 when the run cannot be carried out, does not
// finish every workload, or the audit fails or finds violations; a missed
// target only prints MISS. See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kuota-dev/kuota/bench/internal/runner"
	"github.com/kuota-dev/kuota/bench/internal/summary"
)

func main() {
	os.Exit(run())
}

func run() int {
	var o runner.Options
	flag.StringVar(&o.Scenario, "scenario", "smoke", "scenario: a name in bench/scenarios (baseline, large-scale, one-cohort, smoke) or a path to a file")
	flag.StringVar(&o.Out, "out", "", "results folder (default bench/results/<scenario>-<UTC time>)")
	flag.DurationVar(&o.Timeout, "timeout", runner.DefaultTimeout, "give up when the workloads have not all finished by then")
	flag.StringVar(&o.Manager, "manager", "", "a built kuota-manager binary (default: build one into the results folder)")
	flag.BoolVar(&o.Pprof, "pprof", false, "save the manager's CPU profile over the run and a heap profile at the end")
	flag.DurationVar(&o.ProfileSlice, "pprof-slice", runner.DefaultProfileSlice, "length of each CPU profile slice (merged at the end)")
	flag.StringVar(&o.LogLevel, "log-level", "info", "the manager's log level (--zap-log-level)")
	flag.BoolVar(&o.KeepAuditLog, "keep-audit-log", false, "keep the API server's audit log (audit.log) in the results folder")
	client := flag.Bool("client", false, "run the command given after -- (Kueue's scalability runner, say) instead of the scenario's driver, "+
		"with KUBECONFIG set to an administrator of the benchmark's API server; --timeout bounds it")
	flag.Parse()
	if *client && flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "kuota-bench: --client needs a command after --, e.g. kuota-bench --client -- runner --generatorConfig g.yaml -o .")
		return 2
	}
	if !*client && flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "kuota-bench: unexpected arguments %q (a client command needs --client)\n", flag.Args())
		return 2
	}
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	// Ctrl-C or SIGTERM ends the run; the manager, the API server and etcd
	// are stopped before the command returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o.Log = os.Stderr
	if *client {
		return runClient(ctx, o, flag.Args())
	}
	s, err := runner.Run(ctx, o)
	if s != nil {
		fmt.Println()
		if rerr := summary.Render(os.Stdout, s); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kuota-bench: "+err.Error())
		return 1
	}
	return 0
}

func runClient(ctx context.Context, o runner.Options, command []string) int {
	e, err := runner.RunExternal(ctx, o, command)
	if e != nil {
		fmt.Println()
		if rerr := summary.RenderExternal(os.Stdout, e); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kuota-bench: "+err.Error())
		return 1
	}
	return 0
}
