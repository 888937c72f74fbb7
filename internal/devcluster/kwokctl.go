package devcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Tools are the absolute paths of the binaries a cluster is made of.
type Tools struct {
	Etcd                  string
	KubeApiserver         string
	KubeControllerManager string
	KubeScheduler         string
	Kubectl               string
	Kwok                  string
	Kwokctl               string
}

// toolNames are the file names looked up in the tools folder, in the order
// their absence is reported.
func toolNames() []string {
	return []string{
		"kwokctl", "kwok", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl",
	}
}

// LocateTools finds every binary Up needs in dir and checks that each is an
// executable regular file. kubectl is needed too: kwokctl runs it to check
// that the API server is served and would otherwise try to download it.
func LocateTools(dir string) (Tools, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Tools{}, fmt.Errorf("tools folder %q: %w", dir, err)
	}
	paths := map[string]string{}
	var missing []string
	var errs []error
	for _, name := range toolNames() {
		p := filepath.Join(abs, name)
		paths[name] = p
		err := checkExecutable(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, name)
		case err != nil:
			errs = append(errs, err)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		errs = append([]error{fmt.Errorf("missing binary %s", paths[missing[0]])}, errs...)
	default:
		errs = append([]error{fmt.Errorf("missing binaries in %s: %s", abs, strings.Join(missing, ", "))}, errs...)
	}
	if len(errs) > 0 {
		return Tools{}, fmt.Errorf("%w\nbuild them with `make tools` in a Kuota checkout, or point %s or --tools-bin at the folder that holds them", errors.Join(errs...), ToolsBinEnv)
	}
	return Tools{
		Etcd:                  paths["etcd"],
		KubeApiserver:         paths["kube-apiserver"],
		KubeControllerManager: paths["kube-controller-manager"],
		KubeScheduler:         paths["kube-scheduler"],
		Kubectl:               paths["kubectl"],
		Kwok:                  paths["kwok"],
		Kwokctl:               paths["kwokctl"],
	}, nil
}

// kwokctlPath is the kwokctl binary alone, which is all Down needs.
func kwokctlPath(dir string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(dir, "kwokctl"))
	if err != nil {
		return "", fmt.Errorf("tools folder %q: %w", dir, err)
	}
	if err := checkExecutable(abs); err != nil {
		return "", fmt.Errorf("%w\nbuild it with `make tools`", err)
	}
	return abs, nil
}

// checkExecutable's error wraps fs.ErrNotExist when path does not exist.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("missing binary %s: %w", path, err)
	case err != nil:
		return fmt.Errorf("binary %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("binary %s is not a regular file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("binary %s is not executable", path)
	}
	return nil
}

// CreateClusterArgs is the kwokctl command line that creates the cluster.
// --kubeconfig= (empty) keeps kwokctl away from the user's ~/.kube/config.
func CreateClusterArgs(o Options, t Tools) []string {
	args := []string{
		"--name", o.Name, "create", "cluster",
		"--runtime", "binary",
		"--kubeconfig=",
		"--etcd-binary", t.Etcd,
		"--kube-apiserver-binary", t.KubeApiserver,
		"--kube-controller-manager-binary", t.KubeControllerManager,
		"--kube-scheduler-binary", t.KubeScheduler,
		"--kwok-controller-binary", t.Kwok,
		"--config", o.stagesFile(),
	}
	if o.Port > 0 {
		args = append(args, "--kube-apiserver-port", strconv.Itoa(o.Port))
	}
	if o.DisableQPSLimits {
		args = append(args, "--disable-qps-limits")
	}
	return args
}

// StartClusterArgs is the kwokctl command line that restarts a stopped cluster.
func StartClusterArgs(o Options) []string {
	return []string{"--name", o.Name, "start", "cluster"}
}

// DeleteClusterArgs is the kwokctl command line that deletes the cluster.
// kwokctl insists on a kubeconfig to remove its context from; it is given the
// cluster's own one, which is deleted with the cluster, so that the user's
// ~/.kube/config is never rewritten.
func DeleteClusterArgs(o Options) []string {
	return []string{"--name", o.Name, "delete", "cluster", "--kubeconfig", o.KubeconfigPath()}
}

// KwokctlEnv is the environment kwokctl runs with: the caller's environment
// without any KWOK_* variable (so a user's settings cannot change the
// cluster), plus the work dir and the kubectl binary (kwokctl has no flag for
// the latter).
func KwokctlEnv(base []string, o Options, kubectl string) []string {
	env := make([]string, 0, len(base)+2)
	for _, kv := range base {
		if !strings.HasPrefix(kv, "KWOK_") {
			env = append(env, kv)
		}
	}
	env = append(env, "KWOK_WORKDIR="+o.WorkDir)
	if kubectl != "" {
		env = append(env, "KWOK_KUBECTL_BINARY="+kubectl)
	}
	return env
}

// CheckPortFree reports an error when another process listens on port.
func CheckPortFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d is in use by another process; pass --port with a free port (or 0 to pick one): %w", port, err)
	}
	if err := l.Close(); err != nil {
		return fmt.Errorf("port %d: closing the probe listener: %w", port, err)
	}
	return nil
}
