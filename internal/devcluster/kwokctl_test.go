package devcluster

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func testTools() Tools {
	return Tools{
		Etcd: "/b/etcd", KubeApiserver: "/b/kube-apiserver", KubeControllerManager: "/b/kube-controller-manager",
		KubeScheduler: "/b/kube-scheduler", Kubectl: "/b/kubectl", Kwok: "/b/kwok", Kwokctl: "/b/kwokctl",
	}
}

func TestCreateClusterArgs(t *testing.T) {
	base := Options{Name: "dev1", WorkDir: "/w", Port: 7443, DisableQPSLimits: true}
	tests := []struct {
		name   string
		mutate func(*Options)
		want   []string
	}{
		{
			name:   "fixed port and no qps limits",
			mutate: func(*Options) {},
			want: []string{
				"--name", "dev1", "create", "cluster", "--runtime", "binary", "--kubeconfig=",
				"--etcd-binary", "/b/etcd", "--kube-apiserver-binary", "/b/kube-apiserver",
				"--kube-controller-manager-binary", "/b/kube-controller-manager",
				"--kube-scheduler-binary", "/b/kube-scheduler", "--kwok-controller-binary", "/b/kwok",
				"--config", "/w/dev1-stages.yaml",
				"--kube-apiserver-port", "7443", "--disable-qps-limits",
			},
		},
		{
			name:   "port chosen by kwokctl",
			mutate: func(o *Options) { o.Port = 0; o.DisableQPSLimits = false },
			want: []string{
				"--name", "dev1", "create", "cluster", "--runtime", "binary", "--kubeconfig=",
				"--etcd-binary", "/b/etcd", "--kube-apiserver-binary", "/b/kube-apiserver",
				"--kube-controller-manager-binary", "/b/kube-controller-manager",
				"--kube-scheduler-binary", "/b/kube-scheduler", "--kwok-controller-binary", "/b/kwok",
				"--config", "/w/dev1-stages.yaml",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.mutate(&o)
			if got := CreateClusterArgs(o, testTools()); !slices.Equal(got, tc.want) {
				t.Errorf("CreateClusterArgs() =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestStartAndDeleteArgs(t *testing.T) {
	o := Options{Name: "dev1", WorkDir: "/w"}
	if got, want := StartClusterArgs(o), []string{"--name", "dev1", "start", "cluster"}; !slices.Equal(got, want) {
		t.Errorf("StartClusterArgs() = %q, want %q", got, want)
	}
	want := []string{"--name", "dev1", "delete", "cluster", "--kubeconfig", "/w/clusters/dev1/kubeconfig.yaml"}
	if got := DeleteClusterArgs(o); !slices.Equal(got, want) {
		t.Errorf("DeleteClusterArgs() = %q, want %q", got, want)
	}
}

func TestKwokctlEnv(t *testing.T) {
	base := []string{"PATH=/usr/bin", "KWOK_RUNTIME=docker", "HOME=/root", "KWOK_WORKDIR=/elsewhere"}
	got := KwokctlEnv(base, Options{WorkDir: "/w"}, "/b/kubectl")
	want := []string{"PATH=/usr/bin", "HOME=/root", "KWOK_WORKDIR=/w", "KWOK_KUBECTL_BINARY=/b/kubectl"}
	if !slices.Equal(got, want) {
		t.Errorf("KwokctlEnv() = %q, want %q", got, want)
	}
	if got := KwokctlEnv(nil, Options{WorkDir: "/w"}, ""); !slices.Equal(got, []string{"KWOK_WORKDIR=/w"}) {
		t.Errorf("KwokctlEnv() without kubectl = %q", got)
	}
}

func TestLocateTools(t *testing.T) {
	dir := t.TempDir()
	for _, name := range toolNames() {
		writeExecutable(t, filepath.Join(dir, name))
	}
	tools, err := LocateTools(dir)
	if err != nil {
		t.Fatalf("LocateTools() = %v", err)
	}
	if tools.KubeApiserver != filepath.Join(dir, "kube-apiserver") || tools.Kwokctl != filepath.Join(dir, "kwokctl") {
		t.Errorf("LocateTools() = %+v", tools)
	}
}

func TestLocateToolsErrors(t *testing.T) {
	tests := []struct {
		name     string
		prepare  func(t *testing.T, dir string)
		wantErrs []string
	}{
		{
			name:     "missing file",
			prepare:  func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "kube-scheduler")) },
			wantErrs: []string{"missing binary /", "/kube-scheduler\n", "make tools"},
		},
		{
			name: "not executable",
			prepare: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "kwok"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErrs: []string{"/kwok is not executable", "make tools"},
		},
		{
			name: "a folder",
			prepare: func(t *testing.T, dir string) {
				mustRemove(t, filepath.Join(dir, "etcd"))
				if err := os.Mkdir(filepath.Join(dir, "etcd"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			wantErrs: []string{"/etcd is not a regular file"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range toolNames() {
				writeExecutable(t, filepath.Join(dir, name))
			}
			tc.prepare(t, dir)
			_, err := LocateTools(dir)
			if err == nil {
				t.Fatal("LocateTools() = nil, want an error")
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("LocateTools() = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestLocateToolsNamesEveryMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := LocateTools(dir)
	if err == nil {
		t.Fatal("LocateTools(empty dir) = nil, want an error")
	}
	want := "missing binaries in " + dir + ": kwokctl, kwok, etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("LocateTools(empty dir) = %q, want it to contain %q", err, want)
	}
}

func TestCheckPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	err = CheckPortFree(port)
	if err == nil {
		t.Fatalf("CheckPortFree(%d) = nil while a listener holds it", port)
	}
	for _, want := range []string{"port ", " is in use by another process; pass --port"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPortFree() = %q, want it to contain %q", err, want)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckPortFree(port); err != nil {
		t.Errorf("CheckPortFree(%d) after closing the listener = %v", port, err)
	}
}

func TestTail(t *testing.T) {
	if got := tail("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("tail() = %q", got)
	}
	if got := tail("a", 5); got != "a" {
		t.Errorf("tail() = %q", got)
	}
}

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
