// Package testutil holds helpers shared by Kuota's tests: builders for
// API objects, polling, and readers of the shared reference data. Only
// tests import it.
package testutil

import (
	"testing"
	"time"
)

// Eventually polls cond every interval until it returns nil, and fails the
// test with what and cond's last error once timeout has passed.
func Eventually(t testing.TB, timeout, interval time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(interval)
	}
	t.Fatalf("%s: not true after %s: %v", what, timeout, err)
}
