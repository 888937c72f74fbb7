package benchenv

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerProfile fetches a CPU profile of the API server over the given
// duration (its /debug/pprof endpoint, as the admin user) into path. It
// runs in the background; the returned channel yields the outcome.
func APIServerProfile(ctx context.Context, cfg *rest.Config, delay, duration time.Duration, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		select {
		case <-ctx.Done():
			done <- ctx.Err()
			return
		case <-time.After(delay):
		}
		cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
		if err != nil {
			done <- err
			return
		}
		data, err := cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", fmt.Sprint(int(duration.Seconds()))).Timeout(duration + time.Minute).DoRaw(context.Background())
		if err != nil {
			done <- fmt.Errorf("API server CPU profile: %w", err)
			return
		}
		done <- os.WriteFile(path, data, 0o600)
	}()
	return done
}
