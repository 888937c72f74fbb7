package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"time"
)

// Keys of the certificate data, in the Secret and as file names in a
// certificate directory. They are the names Kueue's Secret uses, so a Secret
// left by a Kueue installation is reused as long as it is valid.
const (
	CACertKey = "ca.crt"
	CAKeyKey  = "ca.key"
	CertKey   = "tls.crt"
	KeyKey    = "tls.key"
	// PreviousCACertKey keeps the CA that a renewal replaced, while it is
	// still valid, so that it stays in the CA bundle until every replica
	// serves a certificate of the new CA.
	PreviousCACertKey = "ca-previous.crt"
)

// Default lifetimes.
const (
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultCertValidity = 365 * 24 * time.Hour
	DefaultRenewBefore  = 90 * 24 * time.Hour
)

// Spec says which certificates to keep and for how long.
type Spec struct {
	// Hosts are the DNS names and IP addresses the serving certificate is
	// valid for.
	Hosts []string
	// CAValidity and CertValidity are the lifetimes of new certificates;
	// RenewBefore is how long before its expiry a certificate is replaced.
	// Zero means the default.
	CAValidity, CertValidity, RenewBefore time.Duration
}

func (s Spec) withDefaults() Spec {
	if s.CAValidity <= 0 {
		s.CAValidity = DefaultCAValidity
	}
	if s.CertValidity <= 0 {
		s.CertValidity = DefaultCertValidity
	}
	if s.RenewBefore <= 0 {
		s.RenewBefore = DefaultRenewBefore
	}
	return s
}

// Renew returns data with a valid CA and serving certificate for spec at
// time now, and whether it changed anything. It keeps what is still valid
// for at least spec.RenewBefore; otherwise it issues a new serving
// certificate, and a new CA too when the CA itself is invalid or about to
// expire. Keys other than the certificate keys are kept. data is not
// modified.
func Renew(data map[string][]byte, spec Spec, now time.Time) (map[string][]byte, bool, error) {
	spec = spec.withDefaults()
	horizon := now.Add(spec.RenewBefore)
	ca, caErr := ParseKeyPair(data[CACertKey], data[CAKeyKey])
	if caErr == nil {
		caErr = verifyCA(ca, horizon)
	}
	if caErr == nil {
		serving, err := ParseKeyPair(data[CertKey], data[KeyKey])
		if err == nil {
			err = VerifyServing(ca, serving, spec.Hosts, horizon)
		}
		if err == nil {
			return data, false, nil
		}
	}
	out := maps.Clone(data)
	if out == nil {
		out = map[string][]byte{}
	}
	if caErr != nil {
		old := ca
		var err error
		if ca, err = NewCA(now, spec.CAValidity); err != nil {
			return nil, false, err
		}
		delete(out, PreviousCACertKey)
		if old != nil && now.Before(old.Cert.NotAfter) {
			out[PreviousCACertKey] = old.CertPEM
		}
		out[CACertKey], out[CAKeyKey] = ca.CertPEM, ca.KeyPEM
	}
	serving, err := NewServing(ca, spec.Hosts, now, spec.CertValidity)
	if err != nil {
		return nil, false, err
	}
	out[CertKey], out[KeyKey] = serving.CertPEM, serving.KeyPEM
	return out, true, nil
}

// CABundle returns the PEM bundle clients must trust for data at time now:
// the current CA, plus the previous one while it has not expired.
func CABundle(data map[string][]byte, now time.Time) ([]byte, error) {
	current := data[CACertKey]
	if block, _ := pem.Decode(current); block == nil {
		return nil, fmt.Errorf("%s holds no PEM certificate", CACertKey)
	}
	bundle := bytes.Clone(current)
	if prev := data[PreviousCACertKey]; len(prev) > 0 && !expired(prev, now) {
		if !bytes.HasSuffix(bundle, []byte("\n")) {
			bundle = append(bundle, '\n')
		}
		bundle = append(bundle, prev...)
	}
	return bundle, nil
}

// expired reports whether the PEM certificate is unreadable or expired at
// now.
func expired(certPEM []byte, now time.Time) bool {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return true
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	return err != nil || now.After(cert.NotAfter)
}
