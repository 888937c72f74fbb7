package visibility

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	ctrl "sigs.k8s.io/controller-runtime"

	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
)

// Delegated authentication reads the front-proxy CA from the
// extension-apiserver-authentication ConfigMap and reviews tokens;
// authorization asks SubjectAccessReviews.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options configure the server.
type Options struct {
	// Source answers the queries (the manager's cache).
	Source Source
	// RestConfig reaches kube-apiserver for delegated authentication and
	// authorization.
	RestConfig *rest.Config
	// BindAddress is the IP to listen on ("" for all interfaces); Port is
	// the TCP port (0 picks a free one, see Port()).
	BindAddress string
	Port        int
	// CertPEM and KeyPEM are the serving certificate.
	CertPEM, KeyPEM []byte
	// MinTLSVersion, CipherSuites and CurvePreferences restrict TLS (the
	// Configuration's tls block; names as Go's crypto/tls spells them).
	MinTLSVersion    string
	CipherSuites     []string
	CurvePreferences []int32
}

// Server is the visibility API server, a manager Runnable that runs on
// every replica (each keeps its queues warm from the informers).
type Server struct {
	opts     Options
	listener net.Listener
}

// New listens on the address (so that the port is known at once) and
// returns the server; it starts serving in Start.
func New(o Options) (*Server, error) {
	if o.Source == nil || o.RestConfig == nil {
		return nil, fmt.Errorf("visibility server: a source and a rest config are required")
	}
	addr := net.JoinHostPort(o.BindAddress, strconv.Itoa(o.Port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("visibility server: listening on %s (visibilityServer.bindPort): %w", addr, err)
	}
	return &Server{opts: o, listener: l}, nil
}

// Port returns the port the server listens on.
func (s *Server) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// NeedLeaderElection is false: every replica serves the API.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("visibility")
	dir, err := os.MkdirTemp("", "kuota-visibility-")
	if err != nil {
		s.listener.Close()
		return fmt.Errorf("visibility server: %w", err)
	}
	defer os.RemoveAll(dir)
	server, err := s.build(ctx, dir)
	if err != nil {
		s.listener.Close()
		return err
	}
	log.Info("Serving the pending-workloads API", "address", s.listener.Addr().String())
	return server.PrepareRun().RunWithContext(ctx)
}

// build assembles the generic API server.
func (s *Server) build(ctx context.Context, dir string) (*genericapiserver.GenericAPIServer, error) {
	scheme, codecs, err := newScheme()
	if err != nil {
		return nil, err
	}
	cfg := genericapiserver.NewRecommendedConfig(codecs)
	cfg.EffectiveVersion = compatibility.NewEffectiveVersionFromString("1.37", "", "")
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, openapinamer.NewDefinitionNamer(scheme))
	cfg.OpenAPIV3Config.Info.Title = "Kuota visibility"
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openAPIDefinitions, openapinamer.NewDefinitionNamer(scheme))
	cfg.OpenAPIConfig.Info.Title = "Kuota visibility"
	// No API Priority and Fairness here: kube-apiserver's applies before
	// requests are forwarded.
	cfg.FlowControl = nil
	if err := s.applyServing(cfg); err != nil {
		return nil, err
	}
	kubeconfig, err := writeKubeconfig(s.opts.RestConfig, dir)
	if err != nil {
		return nil, err
	}
	authn := genericoptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFile = kubeconfig
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(s.opts.RestConfig))
	if err != nil {
		return nil, fmt.Errorf("visibility server: %w", err)
	}
	why, err := withoutFrontProxy(ctx, cs, authn, dir)
	if err != nil {
		return nil, err
	}
	if why != "" {
		ctrl.LoggerFrom(ctx).WithName("visibility").Info(why)
	}
	if err := authn.ApplyTo(&cfg.Authentication, cfg.SecureServing, cfg.OpenAPIConfig); err != nil {
		return nil, fmt.Errorf("visibility server: delegated authentication: %w", err)
	}
	authz := genericoptions.NewDelegatingAuthorizationOptions().WithAlwaysAllowPaths("/healthz", "/readyz", "/livez")
	authz.RemoteKubeConfigFile = kubeconfig
	if err := authz.ApplyTo(&cfg.Authorization); err != nil {
		return nil, fmt.Errorf("visibility server: delegated authorization: %w", err)
	}
	server, err := cfg.Complete().New("kuota-visibility", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("visibility server: %w", err)
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(visibilityapi.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	for _, gv := range Versions {
		group.VersionedResourcesStorageMap[gv.Version] = storages(s.opts.Source)
	}
	if err := server.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("visibility server: installing %s: %w", visibilityapi.GroupName, err)
	}
	return server, nil
}

// applyServing sets up TLS on the listener.
func (s *Server) applyServing(cfg *genericapiserver.RecommendedConfig) error {
	cert, err := dynamiccertificates.NewStaticCertKeyContent("visibility-serving", s.opts.CertPEM, s.opts.KeyPEM)
	if err != nil {
		return fmt.Errorf("visibility server: serving certificate: %w", err)
	}
	serving := genericoptions.NewSecureServingOptions().WithLoopback()
	serving.Listener = s.listener
	serving.BindPort = s.Port()
	serving.ServerCert.GeneratedCert = cert
	serving.MinTLSVersion, serving.CipherSuites, serving.CurvePreferences = s.opts.MinTLSVersion, s.opts.CipherSuites, s.opts.CurvePreferences
	if err := serving.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		return fmt.Errorf("visibility server: serving: %w", err)
	}
	return nil
}
