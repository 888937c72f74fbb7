package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/settings"
	"github.com/kuota-dev/kuota/internal/why"
)

// newWhyCommand builds `why`, Kuota's own: see internal/why.
func newWhyCommand(k *kit) *cobra.Command {
	var output string
	var patience time.Duration
	var noEstimate bool
	var config string
	cmd := &cobra.Command{
		Use:   "why WORKLOAD",
		Short: "Explain why a Workload waits, and estimate when it starts",
		Long: `Explain, from the cluster's live state, why a Workload is not admitted:
the ClusterQueue and flavors it was tried on; for each resource, what it needs,
the nominal quota, what is used and available, and which workloads hold the
most; whether preemption would help and which workloads it would take; whether
a stopped queue, an admission check, a missing LocalQueue, a namespace the
ClusterQueue does not select or a StrictFIFO head blocks it; and how many
workloads are ahead of it. It ends with an estimate of when it starts: Kuota's
scheduling core simulated forward from now, running workloads ending after
their maximumExecutionTimeSeconds or the runtimes of finished workloads of the
same LocalQueue and shape (the assumption is printed with the estimate).
The manager's Configuration (fairSharing, admissionFairSharing, resource
transformations, DRA mappings) shapes the explanation as it shapes the
manager's decisions: --config names its file; without it, the ConfigMap
kueue-system/kueue-manager-config the install bundle creates is read, if
it exists and may be read, and otherwise the defaults apply.
A Workload is named as kubectl names it (kubectl get workloads).`,
		Example: `  kubectl kuota why job-train-7c2f1 -n ml
  kubectl kuota why job-train-7c2f1 -n ml -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output must be text or json, got %q", output)
			}
			if patience < 0 {
				return fmt.Errorf("--patience must not be negative, got %s", patience)
			}
			s, err := k.connect()
			if err != nil {
				return err
			}
			st, err := why.Read(cmd.Context(), s.client)
			if err != nil {
				return err
			}
			opts := why.Options{Scheduling: scheduling.Options{Patience: patience}, NoEstimate: noEstimate}
			cfg, err := managerConfiguration(cmd.Context(), s.client, config, k.opts.Err)
			if err != nil {
				return err
			}
			if cfg != nil {
				lc := settings.Workloads(cfg)
				opts.Scheduling, opts.Lifecycle, opts.FairAdmission = settings.Scheduling(cfg, patience), &lc, settings.AdmissionFairSharing(cfg)
			}
			ex, err := why.Explain(st, s.namespace, args[0], opts)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(k.opts.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(ex)
			}
			return why.Render(k.opts.Out, ex)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", "text", "output format: text or json")
	fs.DurationVar(&patience, "patience", scheduling.DefaultPatience,
		"the manager's preemption patience (kuota-manager --preemption-patience; 0 for Kueue)")
	fs.BoolVar(&noEstimate, "no-estimate", false, "skip the simulation that estimates the start")
	fs.StringVar(&config, "config", "", "the manager's Configuration file (kuota-manager --config); default: the ConfigMap kueue-system/kueue-manager-config, if readable")
	return cmd
}

// The install bundle's Configuration: ConfigMap kueue-system/kueue-manager-config,
// key controller_manager_config.yaml.
const (
	managerConfigNamespace = "kueue-system"
	managerConfigName      = "kueue-manager-config"
	managerConfigKey       = "controller_manager_config.yaml"
)

// managerConfiguration returns the manager's Configuration: the file path
// names, or else the install bundle's ConfigMap. Without a file, a missing
// or unreadable ConfigMap gives nil (the defaults), and one that does not
// decode is reported on errOut and ignored; a bad file is an error.
func managerConfiguration(ctx context.Context, c client.Reader, path string, errOut io.Writer) (*configapi.Configuration, error) {
	if path != "" {
		cfg, err := configapi.Load(path)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		return cfg, nil
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: managerConfigNamespace, Name: managerConfigName}, &cm); err != nil {
		return nil, nil
	}
	data, ok := cm.Data[managerConfigKey]
	if !ok {
		return nil, nil
	}
	cfg, err := configapi.Decode([]byte(data))
	if err != nil {
		fmt.Fprintf(errOut, "warning: ignoring the manager's Configuration in ConfigMap %s/%s: %v\n", managerConfigNamespace, managerConfigName, err)
		return nil, nil
	}
	return cfg, nil
}
