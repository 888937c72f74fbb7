package app

import (
	"fmt"
	"net"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics filter checks each caller's bearer token with a TokenReview
// and its right to GET the path with a SubjectAccessReview.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// pprofLoopback is where a pprof address without a host listens.
const pprofLoopback = "127.0.0.1"

// metricsOptions returns how the manager serves /metrics. Secure serving
// (the default) is HTTPS with a self-signed certificate, the Configuration's
// tls settings, and authentication and authorization delegated to the API
// server: a caller needs a bearer token that may `get` the non-resource URL
// /metrics (the kueue-metrics-reader ClusterRole grants it). Without it the
// endpoint is plain HTTP for anyone (tests only).
func metricsOptions(opts Options) (metricsserver.Options, error) {
	o := metricsserver.Options{
		BindAddress:   opts.Config.Metrics.BindAddress,
		SecureServing: ptr.Deref(opts.SecureMetrics, true),
	}
	if opts.MetricsBindAddress != nil {
		o.BindAddress = *opts.MetricsBindAddress
	}
	if !o.SecureServing {
		return o, nil
	}
	tlsOpts, err := tlsOptions(opts.Config.TLS)
	if err != nil {
		return o, fmt.Errorf("metrics server: %w", err)
	}
	o.TLSOpts = tlsOpts
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	return o, nil
}

// pprofAddress returns where pprof listens for the Configuration's
// pprofBindAddress: off ("" or "0") stays off; an address without a host
// (":8083") listens on the loopback interface only, so profiles, which
// may hold data, are reached through `kubectl port-forward`, not the pod
// network; a host the user wrote ("0.0.0.0:8083", "10.0.0.5:8083") is
// kept as given. An address that is not host:port is returned unchanged
// for the manager to reject.
func pprofAddress(addr string) string {
	if addr == "" || addr == "0" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort(pprofLoopback, port)
}
