package certs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestEnsureDirIssuesOnceAndReuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "local")
	spec := Spec{Hosts: []string{"127.0.0.1", "localhost"}}
	bundle, err := EnsureDir(dir, spec, t0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := ReadFiles(dir, CACertKey, CAKeyKey, CertKey, KeyKey)
	if err != nil || len(data) != 4 {
		t.Fatalf("files in %s: %d, err %v", dir, len(data), err)
	}
	if !bytes.Equal(bundle, data[CACertKey]) {
		t.Error("the returned bundle is not the CA in the directory")
	}
	if err := VerifyServing(certOf(t, data, CACertKey, CAKeyKey), certOf(t, data, CertKey, KeyKey), spec.Hosts, t0); err != nil {
		t.Fatal(err)
	}
	again, err := EnsureDir(dir, spec, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	reread, _ := ReadFiles(dir, CertKey)
	if !bytes.Equal(again, bundle) || !bytes.Equal(reread[CertKey], data[CertKey]) {
		t.Error("valid certificates were replaced on the second start")
	}
	// A new host (another certificate) gets a new serving certificate.
	if _, err := EnsureDir(dir, Spec{Hosts: []string{"127.0.0.1", "::1"}}, t0); err != nil {
		t.Fatal(err)
	}
	if reread, _ = ReadFiles(dir, CertKey); bytes.Equal(reread[CertKey], data[CertKey]) {
		t.Error("the serving certificate was kept although it lacks a host")
	}
}

func TestWaitForFiles(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := WaitForFiles(ctx, dir, 10*time.Millisecond); err == nil {
		t.Fatal("returned without certificate files")
	}
	for _, k := range []string{CertKey, KeyKey} {
		if err := os.WriteFile(filepath.Join(dir, k), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := WaitForFiles(ctx2, dir, 10*time.Millisecond); err != nil {
		t.Fatalf("files present: %v", err)
	}
}
