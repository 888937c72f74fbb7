package app

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

// fakeServer records whether Start ran.
type fakeServer struct {
	webhook.Server
	started chan struct{}
}

func (f *fakeServer) Start(ctx context.Context) error {
	close(f.started)
	<-ctx.Done()
	return nil
}

func (f *fakeServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error { return nil }
}

func (f *fakeServer) Register(string, http.Handler) {}

func TestGatedServerWaitsForCertificates(t *testing.T) {
	gate := make(chan struct{})
	inner := &fakeServer{started: make(chan struct{})}
	s := &gatedServer{Server: inner, wait: func(ctx context.Context) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	check := s.StartedChecker()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-inner.started:
		t.Fatal("the server started before its certificates were in place")
	default:
	}
	if err := check(nil); err == nil {
		t.Error("ready before the certificates were in place")
	}
	close(gate)
	select {
	case <-inner.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not start once the certificates were in place")
	}
	if err := check(nil); err != nil {
		t.Errorf("not ready after starting: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
}

func TestGatedServerStopsQuietlyWhileWaiting(t *testing.T) {
	s := &gatedServer{Server: &fakeServer{started: make(chan struct{})},
		wait: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Start(ctx); err != nil {
		t.Errorf("a stop while waiting is not an error, got %v", err)
	}
	s = &gatedServer{Server: &fakeServer{started: make(chan struct{})},
		wait: func(context.Context) error { return errors.New("broken") }}
	if err := s.Start(context.Background()); err == nil {
		t.Error("a failed wait was swallowed")
	}
}

func TestGatedServerRecordsServedPaths(t *testing.T) {
	s := &gatedServer{Server: &fakeServer{}}
	s.Register("/validate-batch-v1-job", http.NotFoundHandler())
	if !s.serves("/validate-batch-v1-job") || s.serves("/mutate-batch-v1-job") {
		t.Error("served paths not recorded")
	}
}

func TestTLSOptions(t *testing.T) {
	opts, err := tlsOptions(&configapi.TLSOptions{MinVersion: "VersionTLS12",
		CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, CurvePreferences: []int32{29}})
	if err != nil {
		t.Fatal(err)
	}
	c := &tls.Config{}
	for _, o := range opts {
		o(c)
	}
	if c.MinVersion != tls.VersionTLS12 || len(c.CipherSuites) != 1 || c.CipherSuites[0] != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 ||
		len(c.CurvePreferences) != 1 || c.CurvePreferences[0] != tls.X25519 {
		t.Errorf("tls.Config %+v", c)
	}
	if opts, err := tlsOptions(nil); err != nil || opts != nil {
		t.Errorf("nil options: %v, %v", opts, err)
	}
	if _, err := tlsOptions(&configapi.TLSOptions{MinVersion: "VersionTLS99"}); err == nil {
		t.Error("unknown version accepted")
	}
	if _, err := tlsOptions(&configapi.TLSOptions{CipherSuites: []string{"NOPE"}}); err == nil {
		t.Error("unknown cipher suite accepted")
	}
}
