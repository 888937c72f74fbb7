package benchenv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// terminatedWatchersLine matches the API server's count of watchers it
// closed because they did not take their events in time, per resource.
var terminatedWatchersLine = regexp.MustCompile(`^apiserver_terminated_watchers_total\{[^}]*resource="([^"]*)"[^}]*\} ([0-9.e+]+)$`)

// TerminatedWatchers reads from the API server's /metrics how many
// watchers it closed for falling behind, per resource. A closed watcher
// comes back from where it was, but its client sees nothing meanwhile: the
// manager decides on an older state, and its writes meet conflicts.
func TerminatedWatchers(ctx context.Context, cfg *rest.Config) (map[string]int64, error) {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	data, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return ParseTerminatedWatchers(data), nil
}

// ParseTerminatedWatchers extracts apiserver_terminated_watchers_total
// from a metrics page, summed per resource.
func ParseTerminatedWatchers(page []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		m := terminatedWatchersLine.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(string(m[2]), 64)
		if err != nil {
			continue
		}
		out[string(m[1])] += int64(v)
	}
	return out
}
