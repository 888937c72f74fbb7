package demo

import (
	"path/filepath"
	"testing"

	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
)

func TestManagerConfigLoads(t *testing.T) {
	certDir := filepath.Join(t.TempDir(), "a dir", "certs")
	cfg, err := configapi.Decode([]byte(managerConfig(31001, 31002, 31003, certDir)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LeaderElection == nil || ptr.Deref(cfg.LeaderElection.LeaderElect, true) {
		t.Error("leader election must be off: the demo runs one manager")
	}
	if cfg.Health.HealthProbeBindAddress != "127.0.0.1:31001" || cfg.Metrics.BindAddress != "0" {
		t.Errorf("health %q metrics %q", cfg.Health.HealthProbeBindAddress, cfg.Metrics.BindAddress)
	}
	if ptr.Deref(cfg.Webhook.Port, 0) != 31002 || cfg.Webhook.CertDir != certDir {
		t.Errorf("webhook port %v cert dir %q", cfg.Webhook.Port, cfg.Webhook.CertDir)
	}
	if ptr.Deref(cfg.VisibilityServer.BindPort, 0) != 31003 {
		t.Errorf("visibility port %v, want 31003 (a free port, not 8082 that may be taken)", cfg.VisibilityServer.BindPort)
	}
}

func TestClusterOptions(t *testing.T) {
	base := devcluster.DefaultOptions(t.TempDir(), t.TempDir(), func(string) string { return "" })
	base.Nodes, base.NodeGPUs = 7, 3
	base.NodeLabels = map[string]string{"x": "y"}
	o := ClusterOptions(base)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.Name != base.Name || o.WorkDir != base.WorkDir || o.Port != base.Port {
		t.Error("the cluster's name, folders and port come from the base options")
	}
	nodes := o.DesiredNodes()
	if len(nodes) != len(GPUKinds)*gpuNodes {
		t.Fatalf("%d nodes", len(nodes))
	}
	var gpus int64
	kinds := map[string]int{}
	for _, n := range nodes {
		gpus += n.Resources.Name(GPUResource, "").Value()
		kinds[n.Labels[GPULabel]]++
		if _, ok := n.Labels["x"]; ok {
			t.Errorf("node %s keeps the base's labels", n.Name)
		}
	}
	if gpus != CapacityGPUs() || kinds["a100"] != gpuNodes || kinds["v100"] != gpuNodes {
		t.Errorf("%d GPUs, kinds %v", gpus, kinds)
	}
}

func TestProbeJob(t *testing.T) {
	j := probeJob()
	if j.Labels[QueueNameLabel] == "" || j.Spec.Suspend != nil || j.GenerateName == "" {
		t.Errorf("probe %+v", j.ObjectMeta)
	}
}
