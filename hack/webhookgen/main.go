// Command webhookgen finishes the webhook definitions that controller-gen
// generates from +kubebuilder:webhook markers (`make generate` runs it):
// it normalizes config/webhook/manifests.yaml in place (both
// configurations present even before any marker exists, a timeout and a
// namespaceSelector on every webhook; see localwebhook.Normalize) and
// writes the same bytes to the copy that local mode embeds.
//
//	webhookgen <manifests.yaml> <copy>...
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/kuota-dev/kuota/internal/localwebhook"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "webhookgen: "+err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 1 {
		return errors.New("usage: webhookgen <manifests.yaml> <copy>...")
	}
	raw, err := os.ReadFile(args[0])
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := localwebhook.Normalize(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	for _, path := range args {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
