package v1beta2

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

// A Kueue configuration written in v1beta1, as Kueue's manifests shipped
// it before v1beta2: it loads, with v1beta1's meaning.
func TestDecodeV1beta1(t *testing.T) {
	cfg, err := Decode([]byte(`apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
health:
  healthProbeBindAddress: :8081
leaderElection:
  leaderElect: true
controller:
  groupKindConcurrency:
    Job.batch: 5
  cacheSyncTimeout: 90000000000
manageJobsWithoutQueueName: false
waitForPodsReady:
  enable: true
  requeuingStrategy:
    timestamp: Creation
fairSharing:
  enable: true
queueVisibility:
  updateIntervalSeconds: 5
  clusterQueues:
    maxCount: 10
integrations:
  frameworks: ["batch/job", "pod"]
  podOptions:
    namespaceSelector:
      matchExpressions:
      - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system]}
`))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.WaitForPodsReady
	if w == nil || w.Timeout.Duration != 5*time.Minute || !ptr.Deref(w.BlockAdmission, false) || *w.RequeuingStrategy.Timestamp != CreationTimestamp {
		t.Errorf("waitForPodsReady = %+v, want on, with v1beta1's 5m timeout, blockAdmission and the Creation timestamp", w)
	}
	if fs := cfg.FairSharing; fs == nil || len(fs.PreemptionStrategies) != 2 {
		t.Errorf("fairSharing = %+v, want on with both strategies", fs)
	}
	if d := cfg.Controller.CacheSyncTimeout; d == nil || d.Duration != 90*time.Second {
		t.Errorf("cacheSyncTimeout = %v, want 90s", d)
	}
	if cfg.APIVersion != GroupVersion.String() {
		t.Errorf("apiVersion = %q, want v1beta2 after conversion", cfg.APIVersion)
	}
}

func TestDecodeV1beta1Switches(t *testing.T) {
	cases := map[string]struct {
		body        string
		podsReady   bool
		fairSharing bool
		wantErr     string
	}{
		"both off":          {body: "waitForPodsReady: {enable: false, timeout: 10m}\nfairSharing: {enable: false}\n"},
		"enable unset":      {body: "waitForPodsReady: {timeout: 10m}\nfairSharing: {preemptionStrategies: [LessThanInitialShare]}\n"},
		"on, values kept":   {body: "waitForPodsReady: {enable: true, timeout: 10m, blockAdmission: false}\n", podsReady: true},
		"enable not a bool": {body: "fairSharing: {enable: yes-please}\n", wantErr: "fairSharing.enable: want true or false"},
		"block not a map":   {body: "waitForPodsReady: 3\n", wantErr: "waitForPodsReady: want an object"},
		"unknown field":     {body: "queueVisibilty: {}\n", wantErr: `unknown field "queueVisibilty"`},
		"fair sharing on":   {body: "fairSharing: {enable: true, preemptionStrategies: [LessThanInitialShare]}\n", fairSharing: true},
		"cacheSync not ns":  {body: "controller: {cacheSyncTimeout: 1.5}\n", wantErr: "controller.cacheSyncTimeout"},
		"no blocks":         {body: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := DecodeStrict([]byte("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n" + tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg.WaitForPodsReady != nil) != tc.podsReady || (cfg.FairSharing != nil) != tc.fairSharing {
				t.Errorf("waitForPodsReady %+v, fairSharing %+v; want on=%v and on=%v", cfg.WaitForPodsReady, cfg.FairSharing, tc.podsReady, tc.fairSharing)
			}
			if tc.podsReady && (cfg.WaitForPodsReady.Timeout.Duration != 10*time.Minute || ptr.Deref(cfg.WaitForPodsReady.BlockAdmission, true)) {
				t.Errorf("waitForPodsReady = %+v, want the file's 10m and blockAdmission false", cfg.WaitForPodsReady)
			}
		})
	}
}

// v1beta2 files have no enable switch: it stays an unknown field there.
func TestV1beta2KeepsNoEnableSwitch(t *testing.T) {
	_, err := DecodeStrict([]byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {enable: true}\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "fairSharing.enable"`) {
		t.Errorf("error = %v, want the unknown field fairSharing.enable", err)
	}
}
