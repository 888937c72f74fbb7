// Package demo runs `kuota demo`: a short, self-contained show of what Kuota
// does, on a local cluster with fake GPU nodes.
//
// The run (Run) starts the cluster with internal/devcluster (two node groups,
// gpu=a100 and gpu=v100, 8 nvidia.com/gpu per node), installs the CRDs with
// `kubectl apply --server-side`, starts kuota-manager as a child process with
// --local-webhooks and a Configuration written to .cache/demo, waits until
// its webhooks suspend a dry-run Job, applies config/samples/demo-setup.yaml
// (two teams' ClusterQueues sharing a Cohort), then submits a seeded stream
// of Jobs and shows the queues live until every Job has finished. It cleans
// up on the way out, also on SIGINT/SIGTERM: the Jobs are deleted, the
// manager is stopped and the cluster is deleted unless Options.Keep.
//
// The story the stream tells (stream.go): team-a starts a large sweep of
// low-priority jobs while team-b is idle, so team-a borrows team-b's GPUs;
// team-b then starts working and reclaims its quota by preemption; an urgent,
// high-priority job of team-a evicts team-a's own low-priority work; mixed
// traffic from both teams follows. The demo's pods carry
// kuota.dev/run-for: 0s, so on kwok each succeeds as soon as it runs, and a
// Job's runtime is set by completions over parallelism (each wave of pods
// takes about a second).
//
// Layout: the pure parts are stream.go (the job stream), jobs.go (Job
// objects), tracker.go (what the demo learnt from Workloads and
// ClusterQueues), frame.go and render.go (the live table) and summary.go
// (the end-of-run arithmetic). run.go drives a run and its cleanup;
// setup.go talks to the cluster (CRDs, sample setup, webhook probe);
// manager.go runs kuota-manager; live.go submits the stream and refreshes
// the table; watch.go follows the Workloads between refreshes;
// terminal.go draws frames in place.
package demo
