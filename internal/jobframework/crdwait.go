package jobframework

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// An integration of a kind that is not built into Kubernetes (JobSet,
// Kubeflow jobs, LeaderWorkerSet...) may be enabled before its CRD is
// installed: Kueue's shipped Configuration turns every integration on. Its
// controller then waits: one log line says so, the API server's discovery
// is asked again every CRDPoll, and the controller starts as soon as the
// kind is served, without a restart. Its webhooks are served from the
// start (they need no informer, and no request comes before the kind
// exists).

// CRDPoll is how often a waiting integration asks whether its kind is
// served yet.
var CRDPoll = 2 * time.Second

// needsCRD reports whether the integration's kind comes from a CRD.
func needsCRD(in Integration) bool { return in.AddToScheme != nil }

// kindServed reports whether the API server serves the kind.
func kindServed(disc discovery.DiscoveryInterface, gvk schema.GroupVersionKind) (bool, error) {
	served, err := ServedKinds(disc, gvk.GroupVersion())
	return served[gvk.Kind], err
}

// ServedKinds returns the kinds the API server serves in a group version
// (none, without an error, when it does not serve the group version).
func ServedKinds(disc discovery.DiscoveryInterface, gv schema.GroupVersion) (map[string]bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	served := make(map[string]bool, len(list.APIResources))
	for _, r := range list.APIResources {
		served[r.Kind] = true
	}
	return served, nil
}

// setupWhenServed calls setup now when the integration's kind is served,
// or else from a runnable that waits for it.
func setupWhenServed(mgr ctrl.Manager, in Integration, setup func() error) error {
	if !needsCRD(in) {
		return setup()
	}
	return WhenServed(mgr, in.GVK, ctrl.Log.WithName("integrations").WithValues("framework", in.Name, "kind", in.GVK.String()), setup)
}

// WhenServed calls setup now when the API server serves the kind, or else
// from a runnable that asks discovery every CRDPoll and calls it once the
// kind is served (its CRD installed), logging both moments.
func WhenServed(mgr ctrl.Manager, gvk schema.GroupVersionKind, log logr.Logger, setup func() error) error {
	disc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	served, err := kindServed(disc, gvk)
	if err == nil && served {
		return setup()
	}
	if err != nil {
		log.Error(err, "Cannot tell whether the kind is served; starting once it is")
	} else {
		log.Info("The kind is not served (its CRD is not installed); starting once it is")
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		tick := time.NewTicker(CRDPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			served, err := kindServed(disc, gvk)
			if err != nil {
				log.V(2).Info("Asking whether the kind is served", "error", err.Error())
				continue
			}
			if !served {
				continue
			}
			if err := setup(); err != nil {
				return fmt.Errorf("starting the controller of %s: %w", gvk.Kind, err)
			}
			log.Info("The kind is served now; started")
			return nil
		}
	}))
}
