package certs

import (
	"bytes"
	"encoding/pem"
	"testing"
	"time"
)

var testSpec = Spec{Hosts: []string{"kueue-webhook-service.kueue-system.svc"},
	CAValidity: 100 * time.Hour, CertValidity: 10 * time.Hour, RenewBefore: 2 * time.Hour}

func mustRenew(t *testing.T, data map[string][]byte, now time.Time, wantChanged bool) map[string][]byte {
	t.Helper()
	out, changed, err := Renew(data, testSpec, now)
	if err != nil {
		t.Fatal(err)
	}
	if changed != wantChanged {
		t.Fatalf("Renew at %v: changed = %v, want %v", now, changed, wantChanged)
	}
	return out
}

func certOf(t *testing.T, data map[string][]byte, cert, key string) *KeyPair {
	t.Helper()
	kp, err := ParseKeyPair(data[cert], data[key])
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func TestRenewIssuesIntoEmptyDataAndKeepsOtherKeys(t *testing.T) {
	data := mustRenew(t, map[string][]byte{"other": []byte("kept")}, t0, true)
	ca, serving := certOf(t, data, CACertKey, CAKeyKey), certOf(t, data, CertKey, KeyKey)
	if err := VerifyServing(ca, serving, testSpec.Hosts, t0); err != nil {
		t.Fatal(err)
	}
	if string(data["other"]) != "kept" {
		t.Error("an unrelated key was dropped")
	}
	if _, ok := data[PreviousCACertKey]; ok {
		t.Error("a previous CA was recorded for a first issue")
	}
	// Valid data stays as it is.
	again := mustRenew(t, data, t0.Add(time.Hour), false)
	if !bytes.Equal(again[CertKey], data[CertKey]) {
		t.Error("a valid certificate was replaced")
	}
}

func TestRenewRotatesServingCertificateBeforeExpiry(t *testing.T) {
	data := mustRenew(t, nil, t0, true)
	// Still more than RenewBefore left: kept.
	mustRenew(t, data, t0.Add(7*time.Hour), false)
	// Less than RenewBefore left: a new serving certificate, same CA.
	near := t0.Add(8*time.Hour + time.Minute)
	renewed := mustRenew(t, data, near, true)
	if bytes.Equal(renewed[CertKey], data[CertKey]) || bytes.Equal(renewed[KeyKey], data[KeyKey]) {
		t.Fatal("serving certificate and key were not replaced")
	}
	if !bytes.Equal(renewed[CACertKey], data[CACertKey]) || !bytes.Equal(renewed[CAKeyKey], data[CAKeyKey]) {
		t.Error("the CA changed although it was valid")
	}
	ca, serving := certOf(t, renewed, CACertKey, CAKeyKey), certOf(t, renewed, CertKey, KeyKey)
	if err := VerifyServing(ca, serving, testSpec.Hosts, near.Add(testSpec.RenewBefore)); err != nil {
		t.Errorf("renewed certificate does not last past the renewal horizon: %v", err)
	}
}

func TestRenewRotatesCAAndKeepsThePreviousInTheBundle(t *testing.T) {
	data := mustRenew(t, nil, t0, true)
	near := t0.Add(99 * time.Hour) // the CA has 1h left, less than RenewBefore
	renewed := mustRenew(t, data, near, true)
	if bytes.Equal(renewed[CACertKey], data[CACertKey]) {
		t.Fatal("CA was not replaced")
	}
	if !bytes.Equal(renewed[PreviousCACertKey], data[CACertKey]) {
		t.Error("the replaced CA is not kept as the previous CA")
	}
	ca, serving := certOf(t, renewed, CACertKey, CAKeyKey), certOf(t, renewed, CertKey, KeyKey)
	if err := VerifyServing(ca, serving, testSpec.Hosts, near); err != nil {
		t.Error(err)
	}
	bundle, err := CABundle(renewed, near)
	if err != nil {
		t.Fatal(err)
	}
	if n := countCerts(bundle); n != 2 {
		t.Errorf("bundle during the overlap holds %d certificates, want 2", n)
	}
	later, err := CABundle(renewed, t0.Add(101*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n := countCerts(later); n != 1 || !bytes.Equal(later, renewed[CACertKey]) {
		t.Errorf("bundle after the previous CA expired holds %d certificates, want only the current CA", n)
	}
}

func TestRenewReplacesCorruptOrForeignData(t *testing.T) {
	data := mustRenew(t, nil, t0, true)
	for name, mutate := range map[string]func(map[string][]byte){
		"garbage CA":        func(d map[string][]byte) { d[CACertKey] = []byte("not a certificate") },
		"missing key":       func(d map[string][]byte) { delete(d, KeyKey) },
		"serving not CA's":  func(d map[string][]byte) { d[CertKey], d[KeyKey] = d[CACertKey], d[CAKeyKey] },
		"other hosts":       func(d map[string][]byte) { replaceServing(t, d, []string{"other.kueue-system.svc"}) },
		"expired CA":        func(d map[string][]byte) { replaceCA(t, d, t0.Add(-200*time.Hour)) },
		"serving CA absent": func(d map[string][]byte) { delete(d, CAKeyKey) },
	} {
		t.Run(name, func(t *testing.T) {
			broken := map[string][]byte{}
			for k, v := range data {
				broken[k] = v
			}
			mutate(broken)
			renewed := mustRenew(t, broken, t0, true)
			ca, serving := certOf(t, renewed, CACertKey, CAKeyKey), certOf(t, renewed, CertKey, KeyKey)
			if err := VerifyServing(ca, serving, testSpec.Hosts, t0); err != nil {
				t.Error(err)
			}
		})
	}
}

func replaceServing(t *testing.T, d map[string][]byte, hosts []string) {
	ca := certOf(t, d, CACertKey, CAKeyKey)
	s, err := NewServing(ca, hosts, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d[CertKey], d[KeyKey] = s.CertPEM, s.KeyPEM
}

func replaceCA(t *testing.T, d map[string][]byte, at time.Time) {
	ca := mustCA(t, at, time.Hour)
	s, err := NewServing(ca, testSpec.Hosts, at, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d[CACertKey], d[CAKeyKey], d[CertKey], d[KeyKey] = ca.CertPEM, ca.KeyPEM, s.CertPEM, s.KeyPEM
}

func countCerts(bundle []byte) int {
	n := 0
	for {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			return n
		}
		n++
	}
}
