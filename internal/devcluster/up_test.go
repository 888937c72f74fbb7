package devcluster

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// These tests stop Up and Down before kwokctl would run, so they need no
// binaries.

func TestUpNamesMissingBinary(t *testing.T) {
	o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
	o.WorkDir, o.ToolsBin = t.TempDir(), t.TempDir()
	for _, name := range toolNames() {
		if name != "kube-controller-manager" {
			writeExecutable(t, filepath.Join(o.ToolsBin, name))
		}
	}
	_, err := Up(context.Background(), o)
	if err == nil {
		t.Fatal("Up() = nil, want a missing-binary error")
	}
	want := "missing binary " + filepath.Join(o.ToolsBin, "kube-controller-manager")
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("Up() = %q, want it to contain %q and say to run make tools", err, want)
	}
}

func TestUpRejectsBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
	o.WorkDir, o.ToolsBin = t.TempDir(), t.TempDir()
	o.Port = l.Addr().(*net.TCPAddr).Port
	for _, name := range toolNames() {
		writeExecutable(t, filepath.Join(o.ToolsBin, name))
	}
	_, err = Up(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "is in use by another process; pass --port") {
		t.Errorf("Up() = %v, want a port-in-use error", err)
	}
}

func TestUpValidates(t *testing.T) {
	o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
	o.Name = "Not Valid"
	if _, err := Up(context.Background(), o); err == nil || !strings.Contains(err.Error(), "invalid cluster name") {
		t.Errorf("Up() = %v, want a validation error", err)
	}
}

func TestDownWithoutCluster(t *testing.T) {
	o := Options{Name: "absent", WorkDir: t.TempDir(), ToolsBin: t.TempDir()}
	if err := Down(context.Background(), o); err != nil {
		t.Errorf("Down() of a cluster that does not exist = %v, want nil", err)
	}
	exists, err := ClusterExists(o)
	if err != nil || exists {
		t.Errorf("ClusterExists() = %v, %v; want false, nil", exists, err)
	}
}
