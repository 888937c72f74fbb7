// Package validation holds the checks of Kuota's own kinds (ResourceFlavor,
// ClusterQueue, Cohort and Workload) that the CRD schemas and their CEL rules
// cannot express. Every function is pure: it takes API objects and returns a
// field.ErrorList whose entries name the offending field, so the same checks
// serve the admission webhooks, offline tools and tests.
//
// Update validators ratchet: a rule is only applied to the part of the object
// that the update changes. An object that was stored before a rule existed
// can therefore still have its finalizers removed, its status written by the
// manager and be deleted; only a change that introduces a violation is
// refused.
package validation
