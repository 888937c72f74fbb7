// Command kuota is Kuota's command-line tool; installed as kubectl-kuota it
// is also a kubectl plugin. The commands live in internal/cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kuota-dev/kuota/internal/cli"
)

func main() {
	// The clients the commands use log through controller-runtime: only
	// their errors reach the terminal (and no warning that no logger is set).
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		cacheDir = os.TempDir()
	}
	env := cli.Env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, WorkingDir: wd, UserCacheDir: cacheDir, Getenv: os.Getenv}
	return cli.NewRootCommand(cli.CommandName(os.Args[0]), env).ExecuteContext(ctx)
}
