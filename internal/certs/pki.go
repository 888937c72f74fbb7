// Package certs gives the manager's webhook server its TLS certificates when
// internalCertManagement is enabled: a self-signed CA and a serving
// certificate for the webhook Service, kept in a Secret shared by every
// replica, written into webhook.certDir, injected as the CA bundle of the
// webhook configurations, and renewed before they expire. It also issues the
// loopback certificates of local mode. See docs/design/install.md.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Subject names of the CA, as Kueue's internal certificate management names
// them.
const (
	CAName         = "kueue-ca"
	CAOrganization = "kueue"
)

// clockSkew backdates every certificate so that an API server whose clock
// is slightly behind accepts a certificate issued a moment ago.
const clockSkew = time.Hour

// KeyPair is a parsed certificate with its private key and their PEM forms.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA issues a self-signed CA valid from now (minus a clock-skew margin)
// for validity.
func NewCA(now time.Time, validity time.Duration) (*KeyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: CAName, Organization: []string{CAOrganization}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return issue(tmpl, nil)
}

// NewServing issues a server certificate signed by ca for hosts (DNS names
// or IP addresses; the first is the common name). It never outlives ca.
func NewServing(ca *KeyPair, hosts []string, now time.Time, validity time.Duration) (*KeyPair, error) {
	if len(hosts) == 0 {
		return nil, errors.New("a serving certificate needs at least one host")
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: hosts[0]},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return issue(tmpl, ca)
}

// issue signs tmpl with a fresh ECDSA P-256 key; by parent, or by itself
// when parent is nil.
func issue(tmpl *x509.Certificate, parent *KeyPair) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return nil, fmt.Errorf("signing certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	return ParseKeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

// ParseKeyPair parses a PEM certificate and its matching private key (PKCS#1,
// PKCS#8 or SEC 1, so that certificates written by other tools are reused).
func ParseKeyPair(certPEM, keyPEM []byte) (*KeyPair, error) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, errors.New("certificate or key is missing")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing key pair: %w", err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", pair.PrivateKey)
	}
	cert := pair.Leaf
	if cert == nil {
		if cert, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parsing certificate: %w", err)
		}
	}
	return &KeyPair{Cert: cert, Key: signer, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// VerifyServing checks that serving chains to ca and is a server
// certificate valid for every host at time at.
func VerifyServing(ca, serving *KeyPair, hosts []string, at time.Time) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, h := range hosts {
		opts := x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: at,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := serving.Cert.Verify(opts); err != nil {
			return fmt.Errorf("serving certificate at %s for %q: %w", at.Format(time.RFC3339), h, err)
		}
	}
	return nil
}

// verifyCA checks that ca is a CA certificate valid at time at.
func verifyCA(ca *KeyPair, at time.Time) error {
	if !ca.Cert.IsCA {
		return errors.New("certificate is not a CA")
	}
	if at.Before(ca.Cert.NotBefore) || at.After(ca.Cert.NotAfter) {
		return fmt.Errorf("CA is not valid at %s (valid %s to %s)", at.Format(time.RFC3339),
			ca.Cert.NotBefore.Format(time.RFC3339), ca.Cert.NotAfter.Format(time.RFC3339))
	}
	return nil
}
