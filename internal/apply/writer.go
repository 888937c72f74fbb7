package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
//
// The request goes out as metadata (a PartialObjectMetadata with the apply
// patch as its raw body), so the API server answers with the Workload's
// metadata only: the manager reads nothing else from the answer, and
// decoding the whole object back cost about a tenth of its CPU on the
// baseline benchmark.
func (w *Writer) WorkloadStatusVersion(ctx context.Context, wl *kueue.Workload, st *kueue.WorkloadStatus, manager string) (string, error) {
	if Trimmed(wl) {
		return "", fmt.Errorf("workload %s/%s: %w", wl.Namespace, wl.Name, ErrTrimmed)
	}
	body, err := workloadApplyBody(wl, st)
	if err != nil {
		return "", err
	}
	target := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Name: wl.Name}}
	target.SetGroupVersionKind(kueue.GroupVersion.WithKind("Workload"))
	if err := w.Client.Status().Patch(ctx, target, client.RawPatch(types.ApplyPatchType, body),
		client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("applying status of workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return target.ResourceVersion, nil
}

// applyMeta is the identity and precondition of an apply request, and
// nothing else (metav1.ObjectMeta would add an empty creationTimestamp).
type applyMeta struct {
	Name            string    `json:"name"`
	Namespace       string    `json:"namespace"`
	UID             types.UID `json:"uid,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
}

// workloadApply is the body of a Workload status apply request.
type workloadApply struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   applyMeta             `json:"metadata"`
	Status     *kueue.WorkloadStatus `json:"status"`
}

// workloadApplyBody builds the apply request: identity, precondition and
// the status, nothing else.
func workloadApplyBody(wl *kueue.Workload, st *kueue.WorkloadStatus) ([]byte, error) {
	if st == nil {
		st = &kueue.WorkloadStatus{}
	}
	data, err := json.Marshal(workloadApply{APIVersion: kueue.GroupVersion.String(), Kind: "Workload",
		Metadata: applyMeta{Name: wl.Name, Namespace: wl.Namespace, UID: wl.UID, ResourceVersion: wl.ResourceVersion},
		Status:   st})
	if err != nil {
		return nil, fmt.Errorf("encoding workload status: %w", err)
	}
	return data, nil
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
