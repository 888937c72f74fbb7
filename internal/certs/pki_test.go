package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func mustCA(t *testing.T, now time.Time, validity time.Duration) *KeyPair {
	t.Helper()
	ca, err := NewCA(now, validity)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestServingCertificateIsValidForItsHostsOnly(t *testing.T) {
	ca := mustCA(t, t0, DefaultCAValidity)
	hosts := []string{"kueue-webhook-service.kueue-system.svc", "127.0.0.1", "localhost"}
	serving, err := NewServing(ca, hosts, t0, DefaultCertValidity)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyServing(ca, serving, hosts, t0); err != nil {
		t.Errorf("serving certificate rejected for its own hosts: %v", err)
	}
	for _, other := range []string{"kueue-webhook-service.default.svc", "10.0.0.1", "example.com"} {
		if err := VerifyServing(ca, serving, []string{other}, t0); err == nil {
			t.Errorf("serving certificate accepted for %q", other)
		}
	}
	if got := serving.Cert.Subject.CommonName; got != hosts[0] {
		t.Errorf("common name = %q, want %q", got, hosts[0])
	}
	if len(serving.Cert.IPAddresses) != 1 || len(serving.Cert.DNSNames) != 2 {
		t.Errorf("SANs: IPs %v, DNS names %v; want 1 IP and 2 names", serving.Cert.IPAddresses, serving.Cert.DNSNames)
	}
	if serving.Cert.IsCA {
		t.Error("serving certificate is a CA")
	}
}

func TestServingCertificateIsRejectedByAnotherCA(t *testing.T) {
	ca, other := mustCA(t, t0, time.Hour), mustCA(t, t0, time.Hour)
	serving, err := NewServing(ca, []string{"a.b.svc"}, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyServing(other, serving, []string{"a.b.svc"}, t0); err == nil {
		t.Error("a certificate of one CA verified against another CA")
	}
}

func TestValidityWindow(t *testing.T) {
	ca := mustCA(t, t0, 10*time.Hour)
	if !ca.Cert.IsCA || ca.Cert.Subject.CommonName != CAName || ca.Cert.Subject.Organization[0] != CAOrganization {
		t.Errorf("CA subject %v, IsCA %v", ca.Cert.Subject, ca.Cert.IsCA)
	}
	if !ca.Cert.NotBefore.Before(t0) {
		t.Errorf("CA NotBefore %v is not backdated before %v", ca.Cert.NotBefore, t0)
	}
	serving, err := NewServing(ca, []string{"a.b.svc"}, t0, 100*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if serving.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("serving certificate (until %v) outlives its CA (until %v)", serving.Cert.NotAfter, ca.Cert.NotAfter)
	}
	if err := VerifyServing(ca, serving, []string{"a.b.svc"}, t0.Add(11*time.Hour)); err == nil {
		t.Error("certificate verified after its CA expired")
	}
	if _, err := NewServing(ca, nil, t0, time.Hour); err == nil {
		t.Error("a serving certificate without hosts was issued")
	}
}

func TestParseKeyPairAcceptsOtherKeyEncodings(t *testing.T) {
	ca := mustCA(t, t0, time.Hour)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: ca.Cert.SerialNumber, NotBefore: t0, NotAfter: t0.Add(time.Hour),
		DNSNames: []string{"x.y.svc"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ParseKeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}))
	if err != nil {
		t.Fatalf("SEC 1 key rejected: %v", err)
	}
	if err := VerifyServing(ca, pair, []string{"x.y.svc"}, t0); err != nil {
		t.Error(err)
	}
	if _, err := ParseKeyPair(ca.CertPEM, pair.KeyPEM); err == nil || !strings.Contains(err.Error(), "key pair") {
		t.Errorf("mismatched certificate and key: err = %v", err)
	}
	if _, err := ParseKeyPair(nil, nil); err == nil {
		t.Error("empty input accepted")
	}
}
