package certs

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"time"
)

// NewClient issues a client certificate signed by ca with the given common
// name (a front-proxy client certificate for kube-apiserver's aggregation
// layer, say). It never outlives ca.
func NewClient(ca *KeyPair, commonName string, now time.Time, validity time.Duration) (*KeyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	return issue(tmpl, ca)
}
