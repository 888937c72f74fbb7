// Command floor-manager stands in for kuota-manager in a benchmark run to
// measure the API server's floor (bench/internal/floor): it admits every
// Workload at once with one status write and ignores quota. It takes the
// arguments kuota-bench gives a manager (--config, --kubeconfig,
// --zap-log-level) and reads only the health probe address from the
// Configuration. Run it with
//
//	go build -o bin/floor-manager ./bench/cmd/floor-manager
//	go run ./bench/cmd/kuota-bench --scenario baseline --manager bin/floor-manager
//
// Its usage figures mean nothing: it overcommits every queue.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/bench/internal/floor"
	"github.com/kuota-dev/kuota/internal/apply"
)

// workers is the number of parallel admissions, as many as kuota-manager's
// status writers.
const workers = 32

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor-manager: "+err.Error())
		os.Exit(1)
	}
}

// configuration is the part of the Configuration file read here.
type configuration struct {
	Health struct {
		HealthProbeBindAddress string `json:"healthProbeBindAddress"`
	} `json:"health"`
}

func run() error {
	configFile := flag.String("config", "", "path to the Configuration file; only health.healthProbeBindAddress is read")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	var cfg configuration
	if *configFile != "" {
		data, err := os.ReadFile(*configFile)
		if err != nil {
			return fmt.Errorf("reading configuration: %w", err)
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("parsing configuration %s: %w", *configFile, err)
		}
	}
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	restCfg.QPS, restCfg.Burst = 5000, 10000
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: cfg.Health.HealthProbeBindAddress,
		Cache:                  crcache.Options{DefaultTransform: crcache.TransformStripManagedFields()}})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	a := &floor.Admitter{Client: mgr.GetClient(), Writer: &apply.Writer{Client: mgr.GetClient()}}
	if err := a.SetupWithManager(mgr, workers); err != nil {
		return err
	}
	if err := (&floor.Activator{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
