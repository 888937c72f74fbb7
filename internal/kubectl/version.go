package kubectl

import (
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// version: the client's version and the image of the installed manager.

// The manager Deployment of dist/install.yaml (named as Kueue's, so that
// tools looking for Kueue find Kuota).
const (
	managerNamespace  = "kueue-system"
	managerDeployment = "kueue-controller-manager"
	managerContainer  = "manager"
)

func newVersionCommand(k *kit) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Prints the client version and the kueue controller manager image, if installed",
		Example: `  # The client version and the controller manager image, if installed
  kubectl kuota version

  # Look up the controller manager in a custom install namespace
  kubectl kuota version -n kuota`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(k.opts.Out, "Client Version: %s\n", k.opts.ClientVersion)
			s, err := k.connect()
			if err != nil {
				return err
			}
			ns := managerNamespace
			if s.explicitNamespace {
				ns = s.namespace
			}
			var d appsv1.Deployment
			err = s.client.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: managerDeployment}, &d)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading the controller manager Deployment %s/%s: %w", ns, managerDeployment, err)
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Name == managerContainer {
					fmt.Fprintf(k.opts.Out, "Kueue Controller Manager Image: %s\n", c.Image)
					break
				}
			}
			return nil
		},
	}
}
