package devcluster

import (
	"fmt"
	"path/filepath"
	"strings"
)

// frontProxyName is the common name of the client certificate kwokctl
// gives kube-apiserver for its aggregation layer (its admin certificate).
const frontProxyName = "kwok-admin"

// AggregationConfig is the kwokctl configuration that turns
// kube-apiserver's aggregation layer on, so that the manager's
// pending-workloads API (an APIService served from the host, see
// docs/visibility.md) is reachable through it: kwokctl already passes a
// proxy client certificate (its admin certificate, signed by the cluster
// CA); this adds the request-header flags that tell aggregated servers to
// trust it, and routing to endpoints, since the cluster has no kube-proxy.
func (o Options) AggregationConfig() string {
	ca := filepath.Join(o.clusterDir(), "pki", "ca.crt")
	args := [][2]string{
		{"requestheader-client-ca-file", ca},
		{"requestheader-allowed-names", frontProxyName},
		{"requestheader-username-headers", "X-Remote-User"},
		{"requestheader-group-headers", "X-Remote-Group"},
		{"requestheader-extra-headers-prefix", "X-Remote-Extra-"},
		{"enable-aggregator-routing", "true"},
	}
	var b strings.Builder
	b.WriteString("apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokctlConfiguration\ncomponentsPatches:\n- name: kube-apiserver\n  extraArgs:\n")
	for _, a := range args {
		fmt.Fprintf(&b, "  - key: %s\n    value: %q\n", a[0], a[1])
	}
	return b.String()
}
