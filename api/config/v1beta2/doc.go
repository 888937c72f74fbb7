// Package v1beta2 holds the Go form of Kuota's manager configuration file, the
// config.kueue.x-k8s.io/v1beta2 Configuration kind. Field names, defaults and
// validation rules follow Kueue's file format, so a file written for Kueue's
// controller manager is accepted by Kuota unchanged.
//
// The package offers four layers that callers can use separately:
//
//   - the types (Configuration and the structs it embeds),
//   - SetDefaults, which fills every field that has a documented default,
//   - Validate, a pure function returning a field.ErrorList, and
//   - Load and Decode, which strictly decode a file, default it and validate it.
//
// +kubebuilder:object:generate=true
// +groupName=config.kueue.x-k8s.io
package v1beta2
