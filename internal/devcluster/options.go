package devcluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults of Options. The kube-apiserver port is fixed by default so that a
// kubeconfig or a bookmark stays valid across `dev down` and `dev up`; pass
// port 0 to let kwokctl pick a free one.
const (
	DefaultName        = "kuota"
	DefaultPort        = 6443
	DefaultNodes       = 4
	DefaultNodeCPU     = "32"
	DefaultNodeMemory  = "256Gi"
	DefaultPodsPerNode = 110
	DefaultNodeGroup   = "worker"
	ToolsBinEnv        = "KUOTA_TOOLS_BIN"
	GPUResource        = corev1.ResourceName("nvidia.com/gpu")
	modulePath         = "github.com/kuota-dev/kuota"
	repoCacheDir       = ".cache"
	userCacheSubdir    = "kuota"
	workDirName        = "kwok"
	toolsBinName       = "bin"
	maxNodesPerGroup   = 5000
)

// Options describes the cluster that Up creates or reconciles and Down deletes.
type Options struct {
	// Name of the kwokctl cluster; also its kubeconfig context (kwok-<name>).
	Name string
	// WorkDir is passed to kwokctl as KWOK_WORKDIR; clusters live under it.
	WorkDir string
	// ToolsBin holds etcd, kube-apiserver, ..., kwok, kwokctl.
	ToolsBin string
	// Port of the kube-apiserver on 127.0.0.1; 0 lets kwokctl pick one.
	Port int
	// Nodes is the size of the default node group (named DefaultNodeGroup).
	Nodes int
	// NodeCPU, NodeMemory, NodeGPUs and PodsPerNode are each node's capacity,
	// unless a node group overrides them. NodeGPUs 0 means no nvidia.com/gpu.
	NodeCPU     resource.Quantity
	NodeMemory  resource.Quantity
	NodeGPUs    int64
	PodsPerNode int64
	// NodeLabels are put on every node.
	NodeLabels map[string]string
	// NodeGroups are extra groups of nodes, after the default group.
	NodeGroups []NodeGroup
	// DisableQPSLimits lifts the request limits of the control plane
	// (kwokctl --disable-qps-limits), which a dev cluster wants.
	DisableQPSLimits bool
	// PodRuntime is how long a pod whose restartPolicy is not Always (a
	// Job's) runs before it succeeds; 0 keeps it running until deleted. A
	// pod's RunForAnnotation wins over it. It takes effect when the cluster
	// is created (see Stages).
	PodRuntime time.Duration
	// Log receives kwokctl's output; nil discards it. Errors carry its tail.
	Log io.Writer
}

// NodeGroup is a set of identical nodes named <Name>-0 ... <Name>-<Count-1>.
type NodeGroup struct {
	Name  string
	Count int
	// Labels are added to (and override) Options.NodeLabels.
	Labels map[string]string
	// Resources override the per-node capacity of Options; a zero quantity
	// removes the resource.
	Resources corev1.ResourceList
}

// DefaultOptions returns the default Options. Paths are resolved from the
// working directory wd: inside a checkout of Kuota they are <repo>/.cache/kwok
// and <repo>/.cache/bin, elsewhere <userCacheDir>/kuota/{kwok,bin}. The
// environment variable KUOTA_TOOLS_BIN, read through getenv, overrides the
// tools folder.
func DefaultOptions(wd, userCacheDir string, getenv func(string) string) Options {
	base := filepath.Join(userCacheDir, userCacheSubdir)
	if root, ok := FindRepoRoot(wd); ok {
		base = filepath.Join(root, repoCacheDir)
	}
	toolsBin := filepath.Join(base, toolsBinName)
	if v := getenv(ToolsBinEnv); v != "" {
		toolsBin = v
	}
	return Options{
		Name:             DefaultName,
		WorkDir:          filepath.Join(base, workDirName),
		ToolsBin:         toolsBin,
		Port:             DefaultPort,
		Nodes:            DefaultNodes,
		NodeCPU:          resource.MustParse(DefaultNodeCPU),
		NodeMemory:       resource.MustParse(DefaultNodeMemory),
		PodsPerNode:      DefaultPodsPerNode,
		DisableQPSLimits: true,
	}
}

// FindRepoRoot walks up from dir to the folder whose go.mod declares Kuota's
// module. It reports false outside a checkout.
func FindRepoRoot(dir string) (string, bool) {
	for dir != "" {
		if isKuotaModule(filepath.Join(dir, "go.mod")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

func isKuotaModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
}

// KubeconfigPath is where kwokctl writes the cluster's kubeconfig.
func (o Options) KubeconfigPath() string {
	return filepath.Join(o.clusterDir(), "kubeconfig.yaml")
}

func (o Options) clusterDir() string {
	return filepath.Join(o.WorkDir, "clusters", o.Name)
}

// Validate checks the options and names every bad field in its error.
func (o Options) Validate() error {
	var errs []error
	if msgs := isDNSLabel(o.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("invalid cluster name %q: %s", o.Name, strings.Join(msgs, "; ")))
	}
	if o.WorkDir == "" {
		errs = append(errs, errors.New("the work dir must not be empty"))
	}
	if o.ToolsBin == "" {
		errs = append(errs, errors.New("the tools bin folder must not be empty"))
	}
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("invalid port %d: must be between 1 and 65535, or 0 to pick a free port", o.Port))
	}
	if o.Nodes < 0 || o.Nodes > maxNodesPerGroup {
		errs = append(errs, fmt.Errorf("invalid node count %d: must be between 0 and %d", o.Nodes, maxNodesPerGroup))
	}
	if o.PodRuntime < 0 {
		errs = append(errs, fmt.Errorf("invalid pod runtime %s: must not be negative", o.PodRuntime))
	}
	errs = append(errs, o.validateCapacity()...)
	if err := validateLabels(o.NodeLabels); err != nil {
		errs = append(errs, fmt.Errorf("invalid node labels: %w", err))
	}
	errs = append(errs, o.validateGroups()...)
	return errors.Join(errs...)
}

func (o Options) validateCapacity() []error {
	var errs []error
	if o.NodeCPU.Sign() <= 0 {
		errs = append(errs, fmt.Errorf("invalid node cpu %q: must be positive", o.NodeCPU.String()))
	}
	if o.NodeMemory.Sign() <= 0 {
		errs = append(errs, fmt.Errorf("invalid node memory %q: must be positive", o.NodeMemory.String()))
	}
	if o.NodeGPUs < 0 {
		errs = append(errs, fmt.Errorf("invalid node gpu count %d: must not be negative", o.NodeGPUs))
	}
	if o.PodsPerNode <= 0 {
		errs = append(errs, fmt.Errorf("invalid pods per node %d: must be positive", o.PodsPerNode))
	}
	return errs
}

func (o Options) validateGroups() []error {
	var errs []error
	seen := map[string]bool{}
	if o.Nodes > 0 {
		seen[DefaultNodeGroup] = true
	}
	for _, g := range o.NodeGroups {
		if err := g.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[g.Name] {
			errs = append(errs, fmt.Errorf("node group %q is defined twice (%q is the group of --nodes)", g.Name, DefaultNodeGroup))
		}
		seen[g.Name] = true
	}
	return errs
}

func (g NodeGroup) validate() error {
	if msgs := isDNSLabel(g.Name); len(msgs) > 0 {
		return fmt.Errorf("invalid node group name %q: %s", g.Name, strings.Join(msgs, "; "))
	}
	if g.Count < 1 || g.Count > maxNodesPerGroup {
		return fmt.Errorf("node group %q: invalid count %d: must be between 1 and %d", g.Name, g.Count, maxNodesPerGroup)
	}
	if err := validateLabels(g.Labels); err != nil {
		return fmt.Errorf("node group %q: invalid labels: %w", g.Name, err)
	}
	for name, q := range g.Resources {
		if err := validateResource(name, q); err != nil {
			return fmt.Errorf("node group %q: %w", g.Name, err)
		}
	}
	return nil
}
