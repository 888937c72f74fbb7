package devcluster

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// RunForAnnotation, on a pod, is how long it runs once started before it
// succeeds (a Go duration, e.g. "30s"; "0s" succeeds at once). It wins
// over Options.PodRuntime and applies to every pod that carries it.
const RunForAnnotation = "kuota.dev/run-for"

// stagesFile is the kwokctl configuration, in the work dir (kwokctl wants
// only folders in clusters/),
// that holds the Stages of the cluster's fake nodes and pods.
func (o Options) stagesFile() string {
	return filepath.Join(o.WorkDir, o.Name+"-stages.yaml")
}

// Stages is the kwok configuration (Stage objects) the cluster is created
// with: nodes are initialized and keep their lease; a scheduled pod turns
// Running and Ready; a pod being deleted goes. Pods keep running, as
// serving pods do, unless they ask to finish: one with RunForAnnotation
// succeeds that long after it started; with runtime > 0, a pod whose
// restartPolicy is not Always (a Job's) succeeds runtime after it started.
// A pod whose restartPolicy is Always (every pod of a Deployment,
// StatefulSet or LeaderWorkerSet, and plain pods by default) would be
// restarted by a kubelet, so it runs until deleted.
func Stages(runtime time.Duration) string {
	docs := []string{nodeInitializeStage, nodeHeartbeatStage, podReadyStage, podRunForStage, podDeleteStage}
	if runtime > 0 {
		docs = append(docs, fmt.Sprintf(podRuntimeStage, runtime.Milliseconds()))
	}
	return strings.Join(docs, "---\n")
}

const nodeInitializeStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kuota-node-initialize
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      {{ with NodeIP }}
      addresses:
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      phase: Running
`

const nodeHeartbeatStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kuota-node-heartbeat
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: In
      values: ['Running']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: In
      values: ['True']
  delay:
    durationMilliseconds: 600000
    jitterDurationMilliseconds: 610000
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
`

const podReadyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kuota-pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Pending']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ with NodeIPWith .spec.nodeName }}
      hostIP: {{ . | Quote }}
      {{ end }}
      {{ with PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      podIP: {{ . | Quote }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
`

// podSucceeded is the status of a pod whose containers exited 0.
const podSucceeded = `    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
`

const podRunForStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kuota-pod-run-for
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Running']
    - key: '.metadata.annotations["` + RunForAnnotation + `"]'
      operator: Exists
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["` + RunForAnnotation + `"]'
  next:
` + podSucceeded

const podRuntimeStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kuota-pod-runtime
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Running']
    - key: '.metadata.annotations["` + RunForAnnotation + `"]'
      operator: DoesNotExist
    - key: '.spec.restartPolicy'
      operator: NotIn
      values: ['Always']
  delay:
    durationMilliseconds: %d
  next:
` + podSucceeded

const podDeleteStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kuota-pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: Exists
  next:
    delete: true
`
