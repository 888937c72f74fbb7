// Package tas is the placement core of topology-aware scheduling (TAS).
//
// A Topology names node labels, widest level first (say block, rack,
// hostname). A Tree groups the nodes of one flavor into domains: a domain at
// level i is one combination of the values of levels 0..i, so rack "r1" of
// block "b1" and rack "r1" of block "b2" are different domains. Domains at
// each level are kept sorted by their values, which makes the children of a
// domain (and the nodes of a lowest-level domain) contiguous, and gives a
// name order for breaking ties.
//
// Capacity is counted in pods of one request: a node fits as many pods as
// its scarcest requested resource allows, and a domain fits the sum of its
// children. With slices, domains of a slice level and above count whole
// slices (groups of Size pods that must share one domain of that level);
// with several layers, each level counts the slices of the outermost layer
// at or below it, made of whole slices of the layers inside.
//
// Place picks domains for a request (Required, Preferred or unconstrained)
// and descends to the lowest level using as few domains as it can; Use takes
// the capacity of a placed assignment away. The result is encoded in the
// compact v1beta2 TopologyAssignment format (Encode, Domains).
//
// The package is pure: no I/O, no clients, and deterministic results.
package tas
