package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WriteFiles writes the given keys of data into dir as files of the same
// names (creating dir), each atomically and only when its content changed,
// so that a certificate watcher never reads a half-written file and is not
// woken for nothing. Private keys are readable by the owner only. It reports
// whether any file changed.
func WriteFiles(dir string, data map[string][]byte, keys ...string) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("creating certificate directory: %w", err)
	}
	changed := false
	for _, k := range keys {
		path := filepath.Join(dir, k)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data[k]) {
			continue
		}
		mode := os.FileMode(0o644)
		if k == KeyKey || k == CAKeyKey {
			mode = 0o600
		}
		if err := writeAtomic(path, data[k], mode); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

func writeAtomic(path string, content []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ReadFiles reads the given keys from files of the same names in dir.
// Missing files are left out.
func ReadFiles(dir string, keys ...string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, k := range keys {
		content, err := os.ReadFile(filepath.Join(dir, k))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading certificate file: %w", err)
		}
		out[k] = content
	}
	return out, nil
}

// EnsureDir keeps a CA and a serving certificate for spec in dir (as
// ca.crt, ca.key, tls.crt and tls.key), reusing those already there while
// they are valid, and returns the CA bundle. Local mode uses it: the CA key
// stays on the developer's disk, next to the serving certificate.
func EnsureDir(dir string, spec Spec, now time.Time) ([]byte, error) {
	keys := []string{CACertKey, CAKeyKey, CertKey, KeyKey}
	data, err := ReadFiles(dir, keys...)
	if err != nil {
		return nil, err
	}
	renewed, changed, err := Renew(data, spec, now)
	if err != nil {
		return nil, err
	}
	if changed {
		if _, err := WriteFiles(dir, renewed, keys...); err != nil {
			return nil, err
		}
	}
	return CABundle(renewed, now)
}

// WaitForFiles waits until dir holds tls.crt and tls.key (mounted by
// cert-manager or by hand when internal certificate management is off),
// checking every interval.
func WaitForFiles(ctx context.Context, dir string, interval time.Duration) error {
	for {
		data, err := ReadFiles(dir, CertKey, KeyKey)
		if err == nil && len(data[CertKey]) > 0 && len(data[KeyKey]) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
