package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// podWatcher records pods of managed Jobs that do not come from an
// admitted template.
type podWatcher struct {
	c       client.Client
	mu      sync.Mutex
	seen    int
	badPods []string
}

func watchPods(ctx context.Context, cs kubernetes.Interface, c client.Client) *podWatcher {
	w := &podWatcher{c: c}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			w.check(ctx, pod)
		}
	}})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return w
}

// check verifies one new pod.
func (w *podWatcher) check(ctx context.Context, pod *corev1.Pod) {
	jobName := pod.Labels[batchv1.JobNameLabel]
	if jobName == "" || !strings.HasPrefix(pod.Namespace, "e2e-") {
		return
	}
	var job batchv1.Job
	if err := w.c.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: jobName}, &job); err != nil {
		return // gone already
	}
	if job.Labels[jobframework.QueueNameLabel] == "" {
		return
	}
	w.mu.Lock()
	w.seen++
	w.mu.Unlock()
	wlName := pod.Annotations[jobframework.WorkloadAnnotation]
	if wlName == "" || pod.Labels[jobframework.PodSetLabel] == "" {
		w.record(pod, "it does not come from an admitted template")
		return
	}
	var wl kueue.Workload
	err := w.c.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: wlName}, &wl)
	if apierrors.IsNotFound(err) {
		w.record(pod, "its Workload "+wlName+" does not exist")
	}
}

func (w *podWatcher) record(pod *corev1.Pod, why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.badPods = append(w.badPods, fmt.Sprintf("%s/%s: %s", pod.Namespace, pod.Name, why))
}

func (w *podWatcher) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.badPods...)
}

// checked is how many pods of managed Jobs were checked.
func (w *podWatcher) checked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}
