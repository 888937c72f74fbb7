package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Writer sends status writes.
type Writer struct {
	Client client.Client
}

// WorkloadStatus applies status to the Workload under the field manager,
// forcing ownership, with the object's resourceVersion as a precondition:
// if the Workload changed since wl was read, the write fails with a
// conflict and nothing is written.
func (w *Writer) WorkloadStatus(ctx context.Context, wl *kueue.Workload, st *kueue.WorkloadStatus, manager string) error {
	_, err := w.WorkloadStatusVersion(ctx, wl, st, manager)
	return err
}

// WorkloadStatusVersion is WorkloadStatus that also returns the
// resourceVersion the write made.
func (w *Writer) WorkloadStatusVersion(ctx context.Context, wl *kueue.Workload, st *kueue.WorkloadStatus, manager string) (string, error) {
	if Trimmed(wl) {
		return "", fmt.Errorf("workload %s/%s: %w", wl.Namespace, wl.Name, ErrTrimmed)
	}
	u, err := workloadApplyObject(wl, st)
	if err != nil {
		return "", err
	}
	if err := w.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("applying status of workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return u.GetResourceVersion(), nil
}

// workloadApplyObject builds the apply request: identity, precondition and
// the status, nothing else.
func workloadApplyObject(wl *kueue.Workload, st *kueue.WorkloadStatus) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encoding workload status: %w", err)
	}
	status := map[string]any{}
	if err := json.Unmarshal(data, &status); err != nil {
		return nil, fmt.Errorf("decoding workload status: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetAPIVersion(kueue.GroupVersion.String())
	u.SetKind("Workload")
	u.SetName(wl.Name)
	u.SetNamespace(wl.Namespace)
	u.SetUID(wl.UID)
	u.SetResourceVersion(wl.ResourceVersion)
	return u, nil
}

// Pool runs writes on a bounded number of goroutines.
type Pool struct {
	jobs chan func()
	wg   sync.WaitGroup
}

// NewPool starts n workers.
func NewPool(n int) *Pool {
	p := &Pool{jobs: make(chan func(), 4*n)}
	for range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for job := range p.jobs {
				job()
			}
		}()
	}
	return p
}

// Go queues a job; it blocks while every worker is busy and the backlog is
// full, which slows the scheduler down rather than piling up writes.
func (p *Pool) Go(job func()) { p.jobs <- job }

// Close stops accepting jobs and waits for the queued ones.
func (p *Pool) Close() {
	close(p.jobs)
	p.wg.Wait()
}
