package v1beta2

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

// invalidYAML lists configuration fragments (appended to a valid header) and
// the strings the resulting error must contain, starting with the path of
// the offending field.
var invalidYAML = map[string]struct {
	body string
	want []string
}{
	"unknown framework": {
		"integrations:\n  frameworks: [batch/job, kubeflow.org/notajob]\n",
		[]string{"integrations.frameworks[1]", "Unsupported value"},
	},
	"duplicate framework": {
		"integrations:\n  frameworks: [pod, batch/job, pod]\n",
		[]string{"integrations.frameworks[2]", "Duplicate value"},
	},
	"external framework without version": {
		"integrations:\n  externalFrameworks: [Pipeline.tekton]\n",
		[]string{"integrations.externalFrameworks[0]", "Kind.version.group"},
	},
	"external framework shadows a built-in one": {
		"integrations:\n  externalFrameworks: [Job.v1.batch]\n",
		[]string{"integrations.externalFrameworks[0]", "Duplicate value"},
	},
	"external framework listed twice": {
		"integrations:\n  externalFrameworks: [A.v1.example.com, A.v2.example.com]\n",
		[]string{"integrations.externalFrameworks[1]"},
	},
	"negative pods-ready timeout": {
		"waitForPodsReady:\n  timeout: -5m\n",
		[]string{"waitForPodsReady.timeout", "greater than or equal to 0"},
	},
	"negative recovery timeout": {
		"waitForPodsReady:\n  recoveryTimeout: -1s\n",
		[]string{"waitForPodsReady.recoveryTimeout"},
	},
	"unknown requeuing timestamp": {
		"waitForPodsReady:\n  requeuingStrategy:\n    timestamp: Admission\n",
		[]string{"waitForPodsReady.requeuingStrategy.timestamp", `"Eviction"`, `"Creation"`},
	},
	"negative backoff": {
		"waitForPodsReady:\n  requeuingStrategy:\n    backoffBaseSeconds: -1\n    backoffLimitCount: -2\n",
		[]string{"waitForPodsReady.requeuingStrategy.backoffBaseSeconds", "waitForPodsReady.requeuingStrategy.backoffLimitCount"},
	},
	"fair sharing without strategies": {
		"fairSharing: {}\n",
		[]string{"fairSharing.preemptionStrategies", "Required value"},
	},
	"fair sharing strategies in the wrong order": {
		"fairSharing:\n  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n",
		[]string{"fairSharing.preemptionStrategies", "Unsupported value"},
	},
	"negative usage half-life": {
		"admissionFairSharing:\n  usageHalfLifeTime: -1h\n",
		[]string{"admissionFairSharing.usageHalfLifeTime"},
	},
	"negative sampling interval": {
		"admissionFairSharing:\n  usageSamplingInterval: -1m\n",
		[]string{"admissionFairSharing.usageSamplingInterval", "greater than 0"},
	},
	"negative resource weight": {
		"admissionFairSharing:\n  resourceWeights:\n    cpu: 1\n    memory: -0.5\n",
		[]string{"admissionFairSharing.resourceWeights[memory]"},
	},
	"unknown quota check strategy": {
		"resources:\n  quotaCheckStrategy: Ignore\n",
		[]string{"resources.quotaCheckStrategy", "Unsupported value"},
	},
	"IgnoreUndeclared with excluded prefixes": {
		"resources:\n  quotaCheckStrategy: IgnoreUndeclared\n  excludeResourcePrefixes: [example.com/]\n",
		[]string{"resources.quotaCheckStrategy", "excludeResourcePrefixes"},
	},
	"duplicate transformation input": {
		"resources:\n  transformations:\n  - input: example.com/a\n  - input: example.com/a\n",
		[]string{"resources.transformations[1].input", "Duplicate value"},
	},
	"unknown transformation strategy": {
		"resources:\n  transformations:\n  - input: example.com/a\n    strategy: Drop\n",
		[]string{"resources.transformations[0].strategy"},
	},
	"device class mapping without classes": {
		"resources:\n  deviceClassMappings:\n  - name: example.com/gpu\n    deviceClassNames: []\n",
		[]string{"resources.deviceClassMappings[0].deviceClassNames"},
	},
	"device class mapped twice": {
		"resources:\n  deviceClassMappings:\n  - name: a\n    deviceClassNames: [gpu.example.com]\n  - name: b\n    deviceClassNames: [gpu.example.com]\n",
		[]string{"resources.deviceClassMappings[1].deviceClassNames[0]", "already mapped"},
	},
	"device source with both types": {
		"resources:\n  deviceClassMappings:\n  - name: a\n    deviceClassNames: [gpu.example.com]\n    sources:\n" +
			"    - counter: {name: mem, driver: d.example.com, deviceSelector: {cel: {expression: 'true'}}}\n" +
			"      capacity: {name: mem, driver: d.example.com, deviceSelector: {cel: {expression: 'true'}}}\n",
		[]string{"resources.deviceClassMappings[0].sources[0]"},
	},
	"device selector that does not parse": {
		"resources:\n  deviceClassMappings:\n  - name: a\n    deviceClassNames: [gpu.example.com]\n    sources:\n" +
			"    - counter: {name: mem, driver: d.example.com, deviceSelector: {cel: {expression: 'device.driver =='}}}\n",
		[]string{"resources.deviceClassMappings[0].sources[0].counter.deviceSelector.cel.expression"},
	},
	"webhook service name is not a DNS label": {
		"internalCertManagement:\n  webhookServiceName: Webhook_Service\n",
		[]string{"internalCertManagement.webhookServiceName"},
	},
	"webhook secret name is not a DNS subdomain": {
		"internalCertManagement:\n  webhookSecretName: -secret\n",
		[]string{"internalCertManagement.webhookSecretName"},
	},
	"namespace selector matching everything": {
		"managedJobsNamespaceSelector: {}\n",
		[]string{"managedJobsNamespaceSelector", `must not match the "kube-system" namespace`},
	},
	"namespace selector matching the manager namespace": {
		"namespace: kuota\nmanagedJobsNamespaceSelector:\n  matchExpressions:\n" +
			"  - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}\n",
		[]string{"managedJobsNamespaceSelector", `"kuota" namespace`},
	},
	"namespace selector with a bad operator": {
		"managedJobsNamespaceSelector:\n  matchExpressions:\n  - {key: team, operator: Near, values: [a]}\n",
		[]string{"managedJobsNamespaceSelector.matchExpressions[0].operator"},
	},
	"origin is not a label value": {
		"multiKueue:\n  origin: not a label value\n",
		[]string{"multiKueue.origin"},
	},
	"negative MultiKueue durations": {
		"multiKueue:\n  gcInterval: -1m\n  workerLostTimeout: -1s\n",
		[]string{"multiKueue.gcInterval", "multiKueue.workerLostTimeout"},
	},
	"zero step size": {
		"multiKueue:\n  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental\n" +
			"  incrementalDispatcherConfig:\n    stepSize: 0\n",
		[]string{"multiKueue.incrementalDispatcherConfig.stepSize"},
	},
	"step size without the incremental dispatcher": {
		"multiKueue:\n  incrementalDispatcherConfig:\n    stepSize: 2\n",
		[]string{"multiKueue.incrementalDispatcherConfig", "incremental"},
	},
	"MultiKueue external framework name": {
		"multiKueue:\n  externalFrameworks:\n  - name: Pipeline\n",
		[]string{"multiKueue.externalFrameworks[0].name"},
	},
	"MultiKueue external framework shadows an adapter": {
		"integrations:\n  frameworks: [batch/job, jobset.x-k8s.io/jobset]\n" +
			"multiKueue:\n  externalFrameworks:\n  - name: JobSet.v1alpha2.jobset.x-k8s.io\n",
		[]string{"multiKueue.externalFrameworks[0].name", "built-in"},
	},
	"both access and credentials providers": {
		"multiKueue:\n  clusterProfile:\n" +
			"    accessProviders:\n    - {name: a, execConfig: {command: c, apiVersion: v, interactiveMode: Never}}\n" +
			"    credentialsProviders:\n    - {name: a, execConfig: {command: c, apiVersion: v, interactiveMode: Never}}\n",
		[]string{"multiKueue.clusterProfile.credentialsProviders"},
	},
	"incomplete exec config": {
		"multiKueue:\n  clusterProfile:\n    accessProviders:\n    - name: a\n      execConfig: {interactiveMode: Sometimes}\n",
		[]string{"multiKueue.clusterProfile.accessProviders[0].execConfig.command",
			"multiKueue.clusterProfile.accessProviders[0].execConfig.interactiveMode"},
	},
	"cipher suites with TLS 1.3": {
		"tls:\n  minVersion: VersionTLS13\n  cipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n",
		[]string{"tls.cipherSuites", "VersionTLS13"},
	},
	"unknown TLS version": {
		"tls:\n  minVersion: VersionTLS14\n",
		[]string{"tls.minVersion"},
	},
	"unknown cipher suite and curve": {
		"tls:\n  cipherSuites: [TLS_MADE_UP]\n  curvePreferences: [29, 7]\n",
		[]string{"tls.cipherSuites[0]", "tls.curvePreferences[1]"},
	},
	"visibility port out of range": {
		"visibilityServer:\n  bindPort: 70000\n",
		[]string{"visibilityServer.bindPort", "1 and 65535"},
	},
	"visibility address is not an IP": {
		"visibilityServer:\n  bindAddress: localhost\n",
		[]string{"visibilityServer.bindAddress"},
	},
	"negative retention": {
		"objectRetentionPolicies:\n  workloads:\n    afterFinished: -1h\n    afterDeactivatedByKueue: -1s\n",
		[]string{"objectRetentionPolicies.workloads.afterFinished", "objectRetentionPolicies.workloads.afterDeactivatedByKueue"},
	},
	"negative burst": {
		"clientConnection:\n  burst: -1\n",
		[]string{"clientConnection.burst"},
	},
	"custom label name pattern": {
		"metrics:\n  customLabels:\n  - name: 1team\n",
		[]string{"metrics.customLabels[0].name", "^[a-zA-Z][a-zA-Z0-9_]*$"},
	},
	"custom label with label and annotation": {
		"metrics:\n  customLabels:\n  - {name: team, sourceLabelKey: a, sourceAnnotationKey: b}\n",
		[]string{"metrics.customLabels[0].sourceAnnotationKey", "sourceLabelKey"},
	},
	"workload custom label without tracked values": {
		"metrics:\n  customLabels:\n  - {name: team, sourceKind: Workload}\n",
		[]string{"metrics.customLabels[0].trackedValues"},
	},
	"too many workload custom labels": {
		"metrics:\n  customLabels:\n  - {name: a, sourceKind: Workload, trackedValues: [x]}\n" +
			"  - {name: b, sourceKind: Workload, trackedValues: [x]}\n  - {name: c, sourceKind: Workload, trackedValues: [x]}\n",
		[]string{"metrics.customLabels[2].sourceKind", "at most 2"},
	},
	"unknown custom label source kind and duplicate name": {
		"metrics:\n  customLabels:\n  - {name: team}\n  - {name: team, sourceKind: Node}\n",
		[]string{"metrics.customLabels[1].name", "metrics.customLabels[1].sourceKind"},
	},
	"invalid local queue selector": {
		"metrics:\n  localQueueMetrics:\n    enable: true\n    localQueueSelector:\n      matchLabels: {\"bad key!\": x}\n",
		[]string{"metrics.localQueueMetrics.localQueueSelector.matchLabels"},
	},
	"lease shorter than renew deadline": {
		"leaderElection:\n  leaderElect: true\n  leaseDuration: 5s\n  renewDeadline: 8s\n",
		[]string{"leaderElection.leaseDuration", "renewDeadline"},
	},
	"negative retry period": {
		"leaderElection:\n  retryPeriod: -2s\n",
		[]string{"leaderElection.retryPeriod"},
	},
}

func TestDecodeRejectsInvalidFields(t *testing.T) {
	for name, tc := range invalidYAML {
		t.Run(name, func(t *testing.T) {
			cfg, err := Decode([]byte(header + tc.body))
			if err == nil {
				t.Fatalf("Decode() = %+v, want an error", cfg)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestValidateStructs(t *testing.T) {
	cases := map[string]struct {
		mutate func(*Configuration)
		want   []string
	}{
		"no integrations block": {
			mutate: func(c *Configuration) { c.Integrations = nil },
			want:   []string{"integrations: Required value"},
		},
		"empty framework list": {
			mutate: func(c *Configuration) { c.Integrations.Frameworks = nil },
			want:   []string{"integrations.frameworks: Required value"},
		},
		"pod integration without namespace selector": {
			mutate: func(c *Configuration) {
				c.Integrations.Frameworks = []string{"pod"}
				c.ManagedJobsNamespaceSelector = nil
			},
			want: []string{"managedJobsNamespaceSelector: Required value"},
		},
		"zero pods-ready timeout": {
			mutate: func(c *Configuration) { c.WaitForPodsReady.Timeout.Duration = 0 },
			want:   []string{"waitForPodsReady.timeout: Required value"},
		},
		"zero sampling interval": {
			mutate: func(c *Configuration) { c.AdmissionFairSharing = &AdmissionFairSharing{} },
			want:   []string{"admissionFairSharing.usageSamplingInterval"},
		},
		"renew deadline too close to retry period": {
			mutate: func(c *Configuration) {
				c.LeaderElection.RetryPeriod.Duration = c.LeaderElection.RenewDeadline.Duration
			},
			want: []string{"leaderElection.renewDeadline"},
		},
		"leader election off skips duration checks": {
			mutate: func(c *Configuration) {
				c.LeaderElection.LeaderElect = ptr.To(false)
				c.LeaderElection.LeaseDuration.Duration = -1
			},
		},
		"unset optional pointers are accepted": {
			mutate: func(c *Configuration) {
				*c = Configuration{Integrations: &Integrations{Frameworks: []string{"batch/job"}}}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := fullyDefaulted()
			tc.mutate(cfg)
			errs := Validate(cfg)
			if len(tc.want) == 0 && len(errs) > 0 {
				t.Fatalf("Validate() = %v, want no errors", errs)
			}
			got := errs.ToAggregate()
			for _, want := range tc.want {
				if got == nil || !strings.Contains(got.Error(), want) {
					t.Errorf("Validate() = %v, want an error containing %q", got, want)
				}
			}
		})
	}
	if errs := Validate(nil); len(errs) == 0 {
		t.Error("Validate(nil) returned no error")
	}
}

func TestBuiltInFrameworkNames(t *testing.T) {
	names := BuiltInFrameworkNames()
	if len(names) != 18 {
		t.Fatalf("got %d built-in frameworks, want 18: %v", len(names), names)
	}
	for _, name := range names {
		if _, ok := BuiltInFrameworkGVK(name); !ok {
			t.Errorf("no GVK for %q", name)
		}
	}
}
