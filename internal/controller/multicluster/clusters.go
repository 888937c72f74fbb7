package multicluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=kueue-system,resources=secrets,verbs=get

// Reasons of a MultiKueueCluster's Active condition.
const (
	ReasonConnected        = "Active"
	ReasonConnectionFailed = "ClientConnectionFailed"
	ReasonBadKubeConfig    = "BadKubeConfig"
	ReasonInsecure         = "InsecureKubeConfig"
	ReasonBadClusterSource = "BadClusterProfile"
)

// KubeConfigDir is where kubeconfigs of locationType Path must be.
const KubeConfigDir = "/etc/multikueue/kubeconfigs/"

// How often a worker's connection is checked: while connected, and while
// it is not.
const (
	checkConnected    = 30 * time.Second
	checkDisconnected = 10 * time.Second
)

// ClusterReconciler connects to the worker each MultiKueueCluster names
// and keeps its Active condition.
type ClusterReconciler struct {
	Client client.Client
	// APIReader reads Secrets (the manager does not cache them).
	APIReader client.Reader
	Remotes   *Remotes
	// Namespace is where the kubeconfig Secrets are: the manager's.
	Namespace string
	// CheckPaths restricts Path kubeconfigs to KubeConfigDir.
	CheckPaths bool
}

// SetupWithManager registers the reconciler.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("multikueue-cluster").
		For(&kueue.MultiKueueCluster{}).Complete(r)
}

// Reconcile connects, checks the connection and writes the condition.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var mkc kueue.MultiKueueCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &mkc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Remotes.Remove(req.Name)
			r.notify(ctx)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mkc.DeletionTimestamp.IsZero() {
		r.Remotes.Remove(mkc.Name)
		r.notify(ctx)
		return ctrl.Result{}, nil
	}
	wasActive := r.Remotes.Active()[mkc.Name] != nil
	active, reason, msg := r.connect(ctx, &mkc)
	if active != wasActive {
		r.notify(ctx)
	}
	if err := r.setActive(ctx, &mkc, active, reason, msg); err != nil {
		return ctrl.Result{}, err
	}
	if active {
		return ctrl.Result{RequeueAfter: checkConnected}, nil
	}
	return ctrl.Result{RequeueAfter: checkDisconnected}, nil
}

// connect reads the kubeconfig and connects; it returns the condition.
func (r *ClusterReconciler) connect(ctx context.Context, mkc *kueue.MultiKueueCluster) (bool, string, string) {
	kc := mkc.Spec.ClusterSource.KubeConfig
	if kc == nil {
		r.Remotes.Remove(mkc.Name)
		return false, ReasonBadClusterSource, "Only spec.clusterSource.kubeConfig is supported; ClusterProfiles are not"
	}
	data, err := r.kubeconfig(ctx, kc)
	if err != nil {
		r.Remotes.Remove(mkc.Name)
		return false, ReasonBadKubeConfig, err.Error()
	}
	if kc.LocationType != kueue.PathLocationType {
		if err := checkSecure(data); err != nil {
			r.Remotes.Remove(mkc.Name)
			return false, ReasonInsecure, err.Error()
		}
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		r.Remotes.Remove(mkc.Name)
		return false, ReasonBadKubeConfig, fmt.Sprintf("Cannot use the kubeconfig: %v", err)
	}
	if err := r.Remotes.Connect(ctx, mkc.Name, data, cfg); err != nil {
		return false, ReasonConnectionFailed, fmt.Sprintf("The worker cluster does not answer: %v", err)
	}
	return true, ReasonConnected, "Connected"
}

// kubeconfig reads the kubeconfig a MultiKueueCluster points at.
func (r *ClusterReconciler) kubeconfig(ctx context.Context, kc *kueue.KubeConfig) ([]byte, error) {
	if kc.LocationType == kueue.PathLocationType {
		path, err := r.checkPath(kc.Location)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the kubeconfig file: %w", err)
		}
		return data, nil
	}
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: kc.Location}, &s); err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, kc.Location, err)
	}
	data, ok := s.Data[kueue.MultiKueueKubeConfigSecretKey]
	if !ok {
		return nil, fmt.Errorf("Secret %s/%s has no key %q", r.Namespace, kc.Location, kueue.MultiKueueKubeConfigSecretKey)
	}
	return data, nil
}

// checkPath keeps Path kubeconfigs inside KubeConfigDir, symlinks
// resolved, when CheckPaths is on.
func (r *ClusterReconciler) checkPath(p string) (string, error) {
	if !r.CheckPaths {
		return p, nil
	}
	outside := fmt.Errorf("the kubeconfig path %q must be inside %s", p, KubeConfigDir)
	if !filepath.IsAbs(p) || strings.Contains(p, "..") {
		return "", outside
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig file: %w", err)
	}
	if !strings.HasPrefix(filepath.Clean(real), KubeConfigDir) {
		return "", outside
	}
	return real, nil
}

// checkSecure refuses kubeconfigs from Secrets that would make the manager
// read its own files or run programs.
func checkSecure(data []byte) error {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("cannot parse the kubeconfig: %w", err)
	}
	for name, a := range cfg.AuthInfos {
		switch {
		case a.TokenFile != "" || a.ClientCertificate != "" || a.ClientKey != "":
			return fmt.Errorf("user %q reads credentials from files of the manager", name)
		case a.Exec != nil || a.AuthProvider != nil:
			return fmt.Errorf("user %q runs a credential plugin", name)
		}
	}
	for name, c := range cfg.Clusters {
		if c.CertificateAuthority != "" {
			return fmt.Errorf("cluster %q reads its certificate authority from a file of the manager", name)
		}
	}
	return nil
}

func (r *ClusterReconciler) setActive(ctx context.Context, mkc *kueue.MultiKueueCluster, active bool, reason, msg string) error {
	status := metav1.ConditionFalse
	if active {
		status = metav1.ConditionTrue
	}
	next := mkc.DeepCopy()
	if !meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: kueue.MultiKueueClusterActive, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: mkc.Generation}) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, next); err != nil {
		return fmt.Errorf("setting the Active condition of MultiKueueCluster %s: %w", mkc.Name, err)
	}
	return nil
}

// notify sends every workload holding a quota reservation with admission
// checks to the workload reconciler: a worker came or went.
func (r *ClusterReconciler) notify(ctx context.Context) {
	var list kueue.WorkloadList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Workloads after a worker connection change")
		return
	}
	for i := range list.Items {
		wl := &list.Items[i]
		if len(wl.Status.AdmissionChecks) == 0 {
			continue
		}
		ev := &kueue.Workload{}
		ev.Namespace, ev.Name = wl.Namespace, wl.Name
		select {
		case r.Remotes.Events <- event.GenericEvent{Object: ev}:
		case <-ctx.Done():
			return
		}
	}
}
