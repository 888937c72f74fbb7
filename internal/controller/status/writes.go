package status

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// statusWriters is how many status writes one refresh sends at once: with
// a thousand queues, writing one after the other would leave the last ones
// stale for seconds.
const statusWriters = 8

// writtenStatus is the last status written to an object, and the
// resourceVersion the object had before.
type writtenStatus struct {
	base   string
	status any
}

// writes is one refresh's status writes, sent in parallel.
type writes struct {
	r       *Reporter
	ctx     context.Context
	slots   chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error
	present map[types.UID]bool
}

func (r *Reporter) newWrites(ctx context.Context) *writes {
	r.writtenMu.Lock()
	if r.written == nil {
		r.written = map[types.UID]writtenStatus{}
	}
	r.writtenMu.Unlock()
	return &writes{r: r, ctx: ctx, slots: make(chan struct{}, statusWriters), present: map[types.UID]bool{}}
}

func (w *writes) note(err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// write replaces the object's status with want when it differs from what
// the API server holds: the cached status, or our last write while the
// cache does not show it yet.
func (w *writes) write(obj client.Object, current, want any) {
	uid := obj.GetUID()
	w.present[uid] = true
	w.r.writtenMu.Lock()
	last, known := w.r.written[uid]
	w.r.writtenMu.Unlock()
	// While the cache still shows the version our last write replaced,
	// what the API server holds is that write.
	holds := current
	if known && obj.GetResourceVersion() == last.base {
		holds = last.status
	}
	if equality.Semantic.DeepEqual(holds, want) {
		return
	}
	base := obj.GetResourceVersion()
	// The whole status is replaced (a JSON patch adding /status), so the
	// write does not depend on how current the cached object is.
	data, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": want}})
	if err != nil {
		w.note(fmt.Errorf("encoding status of %s: %w", obj.GetName(), err))
		return
	}
	patch := client.RawPatch(types.JSONPatchType, data)
	w.slots <- struct{}{}
	w.wg.Add(1)
	go func() {
		defer func() { <-w.slots; w.wg.Done() }()
		// The object is decoded in place from the response, so that the
		// caller's conditions are current.
		if err := w.r.Client.Status().Patch(w.ctx, obj, patch); err != nil {
			w.note(fmt.Errorf("writing status of %s: %w", obj.GetName(), err))
			return
		}
		w.r.writtenMu.Lock()
		w.r.written[uid] = writtenStatus{base: base, status: want}
		w.r.writtenMu.Unlock()
	}()
}

// wait waits for the writes and forgets objects no longer listed.
func (w *writes) wait() error {
	w.wg.Wait()
	if w.err == nil {
		w.r.writtenMu.Lock()
		for uid := range w.r.written {
			if !w.present[uid] {
				delete(w.r.written, uid)
			}
		}
		w.r.writtenMu.Unlock()
	}
	return w.err
}
