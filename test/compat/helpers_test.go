package compat

import (
	"path/filepath"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// plurals are the resources of Kueue's 11 CRDs in kueue.x-k8s.io.
var plurals = []string{
	"admissionchecks",
	"clusterqueues",
	"cohorts",
	"localqueues",
	"multikueueclusters",
	"multikueueconfigs",
	"provisioningrequestconfigs",
	"resourceflavors",
	"topologies",
	"workloadpriorityclasses",
	"workloads",
}

// crdCache keeps parsed CRD files: the workloads CRD alone is ~1 MB of YAML
// and several tests read it. Callers must DeepCopy before mutating.
var crdCache sync.Map // file -> *apiextensionsv1.CustomResourceDefinition

func cachedCRD(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if v, ok := crdCache.Load(file); ok {
		return v.(*apiextensionsv1.CustomResourceDefinition), nil
	}
	crd, err := LoadCRD(file)
	if err != nil {
		return nil, err
	}
	crdCache.Store(file, crd)
	return crd, nil
}

func referenceDir(t *testing.T) string {
	t.Helper()
	dir, err := ReferenceCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// referenceCRD returns Kueue's reference CRD for plural (shared, do not mutate).
func referenceCRD(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := cachedCRD(filepath.Join(referenceDir(t), CRDFileName(plural)))
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

func flatten(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *Snapshot {
	t.Helper()
	snap, err := Flatten(crd, Version)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
