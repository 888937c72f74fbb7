package v1beta2

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	configv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// fullyDefaulted returns what SetDefaults makes of an empty configuration.
func fullyDefaulted() *Configuration {
	return &Configuration{
		Namespace: ptr.To("kueue-system"),
		ControllerManager: ControllerManager{
			Webhook: ControllerWebhook{Port: ptr.To(9443), CertDir: "/tmp/k8s-webhook-server/serving-certs"},
			LeaderElection: &configv1alpha1.LeaderElectionConfiguration{
				LeaderElect:   ptr.To(true),
				LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
				RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
				RetryPeriod:   metav1.Duration{Duration: 2 * time.Second},
				ResourceLock:  "leases",
				ResourceName:  "c1f6bfd2.kueue.x-k8s.io",
			},
			Metrics: ControllerMetrics{BindAddress: ":8443", LocalQueueMetrics: &LocalQueueMetrics{Enable: true}},
			Health: ControllerHealth{
				HealthProbeBindAddress: ":8081",
				ReadinessEndpointName:  "readyz",
				LivenessEndpointName:   "healthz",
			},
			Controller: &ControllerConfigurationSpec{CacheSyncTimeout: duration(2 * time.Minute)},
		},
		ManagedJobsNamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key:      corev1.LabelMetadataName,
				Operator: metav1.LabelSelectorOpNotIn,
				Values:   []string{"kube-system", "kueue-system"},
			}},
		},
		InternalCertManagement: &InternalCertManagement{
			Enable:             ptr.To(true),
			WebhookServiceName: ptr.To("kueue-webhook-service"),
			WebhookSecretName:  ptr.To("kueue-webhook-server-cert"),
		},
		WaitForPodsReady: &WaitForPodsReady{
			Timeout:        metav1.Duration{Duration: 30 * time.Minute},
			BlockAdmission: ptr.To(false),
			RequeuingStrategy: &RequeuingStrategy{
				Timestamp:          ptr.To(EvictionTimestamp),
				BackoffBaseSeconds: ptr.To[int32](60),
				BackoffMaxSeconds:  ptr.To[int32](3600),
			},
			RecoveryTimeout: duration(30 * time.Minute),
		},
		ClientConnection: &ClientConnection{QPS: ptr.To[float32](5000), Burst: ptr.To[int32](10000)},
		Integrations:     &Integrations{Frameworks: []string{"batch/job"}},
		MultiKueue: &MultiKueue{
			GCInterval:        duration(time.Minute),
			Origin:            ptr.To("multikueue"),
			WorkerLostTimeout: duration(15 * time.Minute),
			DispatcherName:    ptr.To(MultiKueueDispatcherModeAllAtOnce),
		},
		Resources:        &Resources{QuotaCheckStrategy: ptr.To(QuotaCheckBlockUndeclared)},
		VisibilityServer: &VisibilityServerConfiguration{BindPort: ptr.To[int32](8082)},
	}
}

type defaultsCase struct {
	in   *Configuration
	want *Configuration
}

func defaultsCases() map[string]defaultsCase {
	return map[string]defaultsCase{
		"empty configuration gets every default": {
			in:   &Configuration{},
			want: fullyDefaulted(),
		},
		"namespace feeds the namespace selector": {
			in: &Configuration{Namespace: ptr.To("batch-system")},
			want: func() *Configuration {
				c := fullyDefaulted()
				c.Namespace = ptr.To("batch-system")
				c.ManagedJobsNamespaceSelector.MatchExpressions[0].Values = []string{"kube-system", "batch-system"}
				return c
			}(),
		},
		"set values are kept": {
			in:   customized(),
			want: customized(),
		},
		"recovery timeout follows a custom timeout": {
			in: &Configuration{WaitForPodsReady: &WaitForPodsReady{Timeout: metav1.Duration{Duration: 7 * time.Minute}}},
			want: func() *Configuration {
				c := fullyDefaulted()
				c.WaitForPodsReady.Timeout.Duration = 7 * time.Minute
				c.WaitForPodsReady.RecoveryTimeout = duration(7 * time.Minute)
				return c
			}(),
		},
		"disabled cert management keeps names unset": {
			in: &Configuration{InternalCertManagement: &InternalCertManagement{Enable: ptr.To(false)}},
			want: func() *Configuration {
				c := fullyDefaulted()
				c.InternalCertManagement = &InternalCertManagement{Enable: ptr.To(false)}
				return c
			}(),
		},
		"incremental dispatcher gets a step size": {
			in: &Configuration{MultiKueue: &MultiKueue{DispatcherName: ptr.To(MultiKueueDispatcherModeIncremental)}},
			want: func() *Configuration {
				c := fullyDefaulted()
				c.MultiKueue.DispatcherName = ptr.To(MultiKueueDispatcherModeIncremental)
				c.MultiKueue.IncrementalDispatcherConfig = &IncrementalDispatcherConfig{StepSize: ptr.To[int32](3)}
				return c
			}(),
		},
		"optional feature blocks are defaulted only when present": {
			in: &Configuration{
				AdmissionFairSharing: &AdmissionFairSharing{},
				Resources:            &Resources{Transformations: []ResourceTransformation{{Input: "nvidia.com/mig"}}},
				ControllerManager: ControllerManager{Metrics: ControllerMetrics{
					CustomLabels: []ControllerMetricsCustomLabel{{Name: "team"}},
				}},
			},
			want: func() *Configuration {
				c := fullyDefaulted()
				c.AdmissionFairSharing = &AdmissionFairSharing{UsageSamplingInterval: metav1.Duration{Duration: 5 * time.Minute}}
				c.Resources.Transformations = []ResourceTransformation{{Input: "nvidia.com/mig", Strategy: ptr.To(Retain)}}
				c.Metrics.CustomLabels = []ControllerMetricsCustomLabel{{Name: "team", SourceKind: ptr.To(SourceKindClusterQueue)}}
				return c
			}(),
		},
	}
}

func TestSetDefaults(t *testing.T) {
	for name, tc := range defaultsCases() {
		t.Run(name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			SetDefaults(got)
			if !equality.Semantic.DeepEqual(tc.want, got) {
				t.Errorf("SetDefaults() mismatch (-want +got):\n%s", diff.Diff(tc.want, got))
			}
			again := got.DeepCopy()
			SetDefaults(again)
			if !equality.Semantic.DeepEqual(got, again) {
				t.Errorf("SetDefaults() is not idempotent (-first +second):\n%s", diff.Diff(got, again))
			}
			if errs := Validate(got); len(errs) > 0 {
				t.Errorf("defaulted configuration does not validate: %v", errs)
			}
		})
	}
}

// customized sets a value in every field that has a default.
func customized() *Configuration {
	return &Configuration{
		Namespace: ptr.To("kuota"),
		ControllerManager: ControllerManager{
			Webhook: ControllerWebhook{Port: ptr.To(10250), CertDir: "/certs"},
			LeaderElection: &configv1alpha1.LeaderElectionConfiguration{
				LeaderElect:   ptr.To(false),
				LeaseDuration: metav1.Duration{Duration: 30 * time.Second},
				RenewDeadline: metav1.Duration{Duration: 20 * time.Second},
				RetryPeriod:   metav1.Duration{Duration: 5 * time.Second},
				ResourceLock:  "leases",
				ResourceName:  "kuota-lock",
			},
			Metrics: ControllerMetrics{BindAddress: "0", LocalQueueMetrics: &LocalQueueMetrics{}},
			Health: ControllerHealth{
				HealthProbeBindAddress: ":9000",
				ReadinessEndpointName:  "ready",
				LivenessEndpointName:   "alive",
			},
			Controller: &ControllerConfigurationSpec{CacheSyncTimeout: duration(time.Minute)},
		},
		ManagedJobsNamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"managed": "yes"}},
		InternalCertManagement: &InternalCertManagement{
			Enable: ptr.To(true), WebhookServiceName: ptr.To("svc"), WebhookSecretName: ptr.To("secret"),
		},
		WaitForPodsReady: &WaitForPodsReady{
			Timeout:        metav1.Duration{Duration: 10 * time.Minute},
			BlockAdmission: ptr.To(true),
			RequeuingStrategy: &RequeuingStrategy{
				Timestamp:          ptr.To(CreationTimestamp),
				BackoffLimitCount:  ptr.To[int32](5),
				BackoffBaseSeconds: ptr.To[int32](10),
				BackoffMaxSeconds:  ptr.To[int32](100),
			},
			RecoveryTimeout: duration(0),
		},
		ClientConnection: &ClientConnection{QPS: ptr.To[float32](-1), Burst: ptr.To[int32](0)},
		Integrations:     &Integrations{Frameworks: []string{"pod", "deployment"}},
		MultiKueue: &MultiKueue{
			GCInterval:                  duration(0),
			Origin:                      ptr.To("east"),
			WorkerLostTimeout:           duration(time.Minute),
			DispatcherName:              ptr.To(MultiKueueDispatcherModeIncremental),
			IncrementalDispatcherConfig: &IncrementalDispatcherConfig{StepSize: ptr.To[int32](1)},
		},
		AdmissionFairSharing: &AdmissionFairSharing{UsageSamplingInterval: metav1.Duration{Duration: time.Minute}},
		Resources:            &Resources{QuotaCheckStrategy: ptr.To(QuotaCheckIgnoreUndeclared)},
		VisibilityServer:     &VisibilityServerConfiguration{BindAddress: ptr.To("127.0.0.1"), BindPort: ptr.To[int32](9999)},
	}
}
