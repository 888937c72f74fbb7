package visibility

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
)

// ServiceName is the install bundle's Service in front of the server.
const ServiceName = "kueue-visibility-server"

// FieldOwner is the field manager of the registrar's writes.
const FieldOwner = "kuota-local-visibility"

// APIServiceName names the APIService of a served version.
func APIServiceName(version string) string { return version + "." + visibilityapi.GroupName }

// Registrar makes kube-apiserver route the API to a server that runs
// outside the cluster (kuota-manager --local-webhooks, integration tests):
// a Service without selector, an EndpointSlice pointing at the host, and
// the APIService objects with the server's CA bundle. kube-apiserver must
// route to endpoints (--enable-aggregator-routing=true), since a local
// cluster has no kube-proxy. The objects are removed when the manager
// stops.
type Registrar struct {
	// Config reaches the API server.
	Config *rest.Config
	// Namespace of the Service (the manager's namespace).
	Namespace string
	// HostIP is the address kube-apiserver reaches the server at; it must
	// not be a loopback address (EndpointSlice validation refuses those).
	HostIP string
	// Port is the server's port; CABundle verifies its certificate.
	Port     int
	CABundle []byte
}

// NeedLeaderElection is false: every replica serves.
func (r *Registrar) NeedLeaderElection() bool { return false }

// Start registers (retrying) and unregisters when ctx ends.
func (r *Registrar) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("local-visibility")
	c, err := r.client()
	if err != nil {
		return err
	}
	if ok, err := aggregationConfigured(ctx, c); err == nil && !ok {
		log.Info("kube-apiserver has no front-proxy (aggregation layer) configured; the pending-workloads API is not registered")
		return nil
	}
	delay := 200 * time.Millisecond
	for {
		err := r.Register(ctx, c)
		if err == nil {
			break
		}
		log.Error(err, "Registering the visibility APIService; retrying", "after", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
	log.Info("Registered the visibility APIService", "endpoint", net.JoinHostPort(r.HostIP, fmt.Sprint(r.Port)))
	<-ctx.Done()
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.Unregister(cleanup, c); err != nil {
		log.Error(err, "Removing the visibility APIService")
	}
	return nil
}

func (r *Registrar) client() (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("local visibility registration: %w", err)
		}
	}
	c, err := client.New(r.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("local visibility registration: %w", err)
	}
	return client.WithFieldOwner(c, FieldOwner), nil
}

// Register creates or updates the Service, its EndpointSlice and the
// APIServices.
func (r *Registrar) Register(ctx context.Context, c client.Client) error {
	if r.HostIP == "" {
		return errors.New("local visibility registration: no host address that kube-apiserver can reach")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", r.Namespace, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: ServiceName}}
	if err := upsert(ctx, c, svc, func() {
		svc.Spec.Selector = nil
		svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(int32(r.Port))}}
	}); err != nil {
		return err
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: ServiceName + "-local"}}
	if err := upsert(ctx, c, slice, func() {
		slice.Labels = map[string]string{discoveryv1.LabelServiceName: ServiceName, discoveryv1.LabelManagedBy: FieldOwner}
		slice.AddressType = discoveryv1.AddressTypeIPv4
		if net.ParseIP(r.HostIP).To4() == nil {
			slice.AddressType = discoveryv1.AddressTypeIPv6
		}
		slice.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{r.HostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}
		slice.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(r.Port)), Protocol: ptr.To(corev1.ProtocolTCP)}}
	}); err != nil {
		return err
	}
	for i, gv := range Versions {
		as := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: APIServiceName(gv.Version)}}
		if err := upsert(ctx, c, as, func() {
			as.Spec = apiregistrationv1.APIServiceSpec{
				Service:              &apiregistrationv1.ServiceReference{Namespace: r.Namespace, Name: ServiceName, Port: ptr.To[int32](443)},
				Group:                gv.Group,
				Version:              gv.Version,
				CABundle:             r.CABundle,
				GroupPriorityMinimum: 100,
				VersionPriority:      int32(100 - 10*i),
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// Unregister removes what Register created.
func (r *Registrar) Unregister(ctx context.Context, c client.Client) error {
	var errs []error
	for _, gv := range Versions {
		errs = append(errs, client.IgnoreNotFound(c.Delete(ctx, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: APIServiceName(gv.Version)}})))
	}
	errs = append(errs,
		client.IgnoreNotFound(c.Delete(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: ServiceName + "-local"}})),
		client.IgnoreNotFound(c.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: ServiceName}})))
	return errors.Join(errs...)
}

// aggregationConfigured reports whether kube-apiserver runs with a
// front-proxy client CA (--requestheader-client-ca-file), which it
// publishes in kube-system/extension-apiserver-authentication: without it
// an APIService cannot work, and registering one would only break
// clients' discovery.
func aggregationConfigured(ctx context.Context, c client.Client) (bool, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "extension-apiserver-authentication"}, cm); err != nil {
		return false, err
	}
	return cm.Data["requestheader-client-ca-file"] != "", nil
}

// upsert creates obj after mutate, or updates the existing one with mutate.
func upsert(ctx context.Context, c client.Client, obj client.Object, mutate func()) error {
	key := client.ObjectKeyFromObject(obj)
	if err := c.Get(ctx, key, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading %T %s: %w", obj, key, err)
		}
		mutate()
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, key, err)
		}
		return nil
	}
	mutate()
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("updating %T %s: %w", obj, key, err)
	}
	return nil
}

// HostAddress returns the first global unicast address of the host's
// network interfaces (IPv4 first), which kube-apiserver on the same host
// can dial and EndpointSlice validation accepts; "" when there is none.
func HostAddress() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	var v6 string
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || !ipnet.IP.IsGlobalUnicast() {
			continue
		}
		if ipnet.IP.To4() != nil {
			return ipnet.IP.String()
		}
		if v6 == "" {
			v6 = ipnet.IP.String()
		}
	}
	return v6
}
