//go:build tools

// Package operators pins the third-party controllers that Kuota's end-to-end
// tests run next to the local cluster, so that a job kind Kuota queues goes
// all the way to pods with its own project's controller. Nothing here is
// compiled into Kuota itself.
package operators

import (
	_ "sigs.k8s.io/jobset"
)
