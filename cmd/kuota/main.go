// Command kuota is Kuota's command-line tool; installed as kubectl-kuota it
// is also a kubectl plugin. The commands live in internal/cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kuota-dev/kuota/internal/cli"
)

func main() {
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
