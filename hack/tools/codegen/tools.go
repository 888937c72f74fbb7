//go:build tools

// Package codegen pins the code generators used by `make generate`.
package codegen

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
