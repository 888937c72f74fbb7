package top

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Options tune Run.
type Options struct {
	// Namespace limits the LocalQueues to one namespace, and the
	// ClusterQueues to those they feed ("" is every namespace and every
	// ClusterQueue).
	Namespace string
	// Interval is the time between refreshes.
	Interval time.Duration
	// Once draws one table and returns.
	Once bool
	// Terminal redraws in place (clearing the screen) instead of printing
	// one table after another.
	Terminal bool
}

// Read lists the queues a snapshot shows: with a namespace, its
// LocalQueues and the ClusterQueues they feed.
func Read(ctx context.Context, c client.Reader, namespace string) (Snapshot, error) {
	var cqs kueue.ClusterQueueList
	if err := c.List(ctx, &cqs); err != nil {
		return Snapshot{}, fmt.Errorf("listing ClusterQueues: %w", err)
	}
	var lqs kueue.LocalQueueList
	if err := c.List(ctx, &lqs, client.InNamespace(namespace)); err != nil {
		return Snapshot{}, fmt.Errorf("listing LocalQueues: %w", err)
	}
	s := Snapshot{ClusterQueues: cqs.Items, LocalQueues: lqs.Items}
	if namespace != "" {
		fed := map[string]bool{}
		for _, lq := range lqs.Items {
			fed[string(lq.Spec.ClusterQueue)] = true
		}
		s.ClusterQueues = slices.DeleteFunc(s.ClusterQueues, func(cq kueue.ClusterQueue) bool { return !fed[cq.Name] })
	}
	return s, nil
}

// clearScreen moves the cursor home and clears the screen.
const clearScreen = "\x1b[H\x1b[2J"

// Run draws the table every Interval until ctx ends (or once). A failed
// read is shown in place of the table and retried at the next refresh,
// except with Once, where it is returned.
func Run(ctx context.Context, c client.Reader, out io.Writer, o Options) error {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		var buf bytes.Buffer
		s, err := Read(ctx, c, o.Namespace)
		if err == nil {
			err = Render(&buf, s)
		}
		if o.Once {
			if err != nil {
				return err
			}
			_, err = out.Write(buf.Bytes())
			return err
		}
		if err != nil {
			buf.Reset()
			fmt.Fprintf(&buf, "%s\n", err)
		}
		if o.Terminal {
			io.WriteString(out, clearScreen)
		} else {
			fmt.Fprintf(out, "--- %s\n", time.Now().Format(time.TimeOnly))
		}
		if _, err := out.Write(buf.Bytes()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
