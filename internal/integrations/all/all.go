// Package all lists every job integration Kuota has, explicitly; the
// Configuration's integrations.frameworks enables them by name.
package all

import (
	"github.com/kuota-dev/kuota/internal/integrations/appwrapper"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/integrations/deployment"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/integrations/kubeflow"
	"github.com/kuota-dev/kuota/internal/integrations/leaderworkerset"
	"github.com/kuota-dev/kuota/internal/integrations/pod"
	"github.com/kuota-dev/kuota/internal/integrations/ray"
	"github.com/kuota-dev/kuota/internal/integrations/spark"
	"github.com/kuota-dev/kuota/internal/integrations/statefulset"
	"github.com/kuota-dev/kuota/internal/integrations/trainjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Integrations returns every integration, in a stable order.
func Integrations() []jobframework.Integration {
	return []jobframework.Integration{
		batchjob.Integration,
		pod.Integration,
		deployment.Integration,
		statefulset.Integration,
		leaderworkerset.Integration,
		trainjob.Integration,
		kubeflow.PyTorchJobIntegration,
		kubeflow.TFJobIntegration,
		kubeflow.XGBoostJobIntegration,
		kubeflow.PaddleJobIntegration,
		kubeflow.JAXJobIntegration,
		kubeflow.MPIJobIntegration,
		jobset.Integration,
		ray.RayJobIntegration,
		ray.RayClusterIntegration,
		ray.RayServiceIntegration,
		appwrapper.Integration,
		spark.Integration,
	}
}
