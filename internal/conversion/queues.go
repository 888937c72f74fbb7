package conversion

import (
	"slices"

	"github.com/kuota-dev/kuota/api/kueue/v1beta1"
	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ClusterQueueUp converts a v1beta1 ClusterQueue to v1beta2: cohort becomes
// cohortName, the plain admissionChecks list joins admissionChecksStrategy
// (as checks on every flavor), and the deprecated fungibility names Borrow
// and Preempt become MayStopSearch. The status fields v1beta2 dropped are
// dropped.
func ClusterQueueUp(in *v1beta1.ClusterQueue) *v1beta2.ClusterQueue {
	s := &in.Spec
	out := &v1beta2.ClusterQueue{
		TypeMeta:   typeMeta(v1beta2.GroupVersion.String(), "ClusterQueue"),
		ObjectMeta: in.ObjectMeta,
		Spec: v1beta2.ClusterQueueSpec{
			ResourceGroups:            s.ResourceGroups,
			CohortName:                s.Cohort,
			QueueingStrategy:          s.QueueingStrategy,
			NamespaceSelector:         s.NamespaceSelector,
			FlavorFungibility:         fungibilityUp(s.FlavorFungibility),
			Preemption:                s.Preemption,
			AdmissionChecksStrategy:   checksUp(s.AdmissionChecks, s.AdmissionChecksStrategy),
			StopPolicy:                s.StopPolicy,
			FairSharing:               s.FairSharing,
			AdmissionScope:            s.AdmissionScope,
			ConcurrentAdmissionPolicy: s.ConcurrentAdmissionPolicy,
		},
		Status: v1beta2.ClusterQueueStatus{
			Conditions:         in.Status.Conditions,
			FlavorsReservation: in.Status.FlavorsReservation,
			FlavorsUsage:       in.Status.FlavorsUsage,
			PendingWorkloads:   in.Status.PendingWorkloads,
			ReservingWorkloads: in.Status.ReservingWorkloads,
			AdmittedWorkloads:  in.Status.AdmittedWorkloads,
			FairSharing:        fairSharingUp(in.Status.FairSharing),
		},
	}
	return out
}

// ClusterQueueDown converts a v1beta2 ClusterQueue to v1beta1. Admission
// checks that apply to every flavor are listed in admissionChecks, v1beta1's
// usual form; a strategy with any per-flavor check stays a strategy.
func ClusterQueueDown(in *v1beta2.ClusterQueue) *v1beta1.ClusterQueue {
	s := &in.Spec
	checks, strategy := checksDown(s.AdmissionChecksStrategy)
	return &v1beta1.ClusterQueue{
		TypeMeta:   typeMeta(v1beta1.GroupVersion.String(), "ClusterQueue"),
		ObjectMeta: in.ObjectMeta,
		Spec: v1beta1.ClusterQueueSpec{
			ResourceGroups:            s.ResourceGroups,
			Cohort:                    s.CohortName,
			QueueingStrategy:          s.QueueingStrategy,
			NamespaceSelector:         s.NamespaceSelector,
			FlavorFungibility:         fungibilityDown(s.FlavorFungibility),
			Preemption:                s.Preemption,
			AdmissionChecks:           checks,
			AdmissionChecksStrategy:   strategy,
			StopPolicy:                s.StopPolicy,
			FairSharing:               s.FairSharing,
			AdmissionScope:            s.AdmissionScope,
			ConcurrentAdmissionPolicy: s.ConcurrentAdmissionPolicy,
		},
		Status: v1beta1.ClusterQueueStatus{
			Conditions:         in.Status.Conditions,
			FlavorsReservation: in.Status.FlavorsReservation,
			FlavorsUsage:       in.Status.FlavorsUsage,
			PendingWorkloads:   in.Status.PendingWorkloads,
			ReservingWorkloads: in.Status.ReservingWorkloads,
			AdmittedWorkloads:  in.Status.AdmittedWorkloads,
			FairSharing:        fairSharingDown(in.Status.FairSharing),
		},
	}
}

func fungibilityUp(in *v1beta1.FlavorFungibility) *v1beta2.FlavorFungibility {
	if in == nil {
		return nil
	}
	policy := func(p v1beta1.FlavorFungibilityPolicy) v1beta2.FlavorFungibilityPolicy {
		if p == v1beta1.Borrow || p == v1beta1.Preempt {
			return v1beta2.MayStopSearch
		}
		return v1beta2.FlavorFungibilityPolicy(p)
	}
	return &v1beta2.FlavorFungibility{
		WhenCanBorrow:  policy(in.WhenCanBorrow),
		WhenCanPreempt: policy(in.WhenCanPreempt),
		Preference:     in.Preference,
	}
}

func fungibilityDown(in *v1beta2.FlavorFungibility) *v1beta1.FlavorFungibility {
	if in == nil {
		return nil
	}
	return &v1beta1.FlavorFungibility{
		WhenCanBorrow:  v1beta1.FlavorFungibilityPolicy(in.WhenCanBorrow),
		WhenCanPreempt: v1beta1.FlavorFungibilityPolicy(in.WhenCanPreempt),
		Preference:     in.Preference,
	}
}

// checksUp merges v1beta1's plain list into the strategy; a check in both
// keeps the strategy's flavors.
func checksUp(plain []v1beta2.AdmissionCheckReference, strategy *v1beta2.AdmissionChecksStrategy) *v1beta2.AdmissionChecksStrategy {
	if len(plain) == 0 {
		return strategy
	}
	out := &v1beta2.AdmissionChecksStrategy{}
	if strategy != nil {
		out.AdmissionChecks = slices.Clone(strategy.AdmissionChecks)
	}
	for _, name := range plain {
		if !slices.ContainsFunc(out.AdmissionChecks, func(r v1beta2.AdmissionCheckStrategyRule) bool { return r.Name == name }) {
			out.AdmissionChecks = append(out.AdmissionChecks, v1beta2.AdmissionCheckStrategyRule{Name: name})
		}
	}
	return out
}

func checksDown(strategy *v1beta2.AdmissionChecksStrategy) ([]v1beta2.AdmissionCheckReference, *v1beta2.AdmissionChecksStrategy) {
	if strategy == nil || len(strategy.AdmissionChecks) == 0 {
		return nil, strategy
	}
	var plain []v1beta2.AdmissionCheckReference
	for _, r := range strategy.AdmissionChecks {
		if len(r.OnFlavors) > 0 {
			return nil, strategy
		}
		plain = append(plain, r.Name)
	}
	return plain, nil
}

func fairSharingUp(in *v1beta1.FairSharingStatus) *v1beta2.FairSharingStatus {
	if in == nil {
		return nil
	}
	return &v1beta2.FairSharingStatus{WeightedShare: in.WeightedShare}
}

func fairSharingDown(in *v1beta2.FairSharingStatus) *v1beta1.FairSharingStatus {
	if in == nil {
		return nil
	}
	return &v1beta1.FairSharingStatus{WeightedShare: in.WeightedShare}
}

// LocalQueueUp converts a v1beta1 LocalQueue to v1beta2: status.flavorUsage
// becomes flavorsUsage; status.flavors, which v1beta2 dropped, is dropped.
func LocalQueueUp(in *v1beta1.LocalQueue) *v1beta2.LocalQueue {
	st := &in.Status
	return &v1beta2.LocalQueue{
		TypeMeta:   typeMeta(v1beta2.GroupVersion.String(), "LocalQueue"),
		ObjectMeta: in.ObjectMeta,
		Spec:       in.Spec,
		Status: v1beta2.LocalQueueStatus{
			Conditions:         st.Conditions,
			PendingWorkloads:   st.PendingWorkloads,
			ReservingWorkloads: st.ReservingWorkloads,
			AdmittedWorkloads:  st.AdmittedWorkloads,
			FlavorsReservation: st.FlavorsReservation,
			FlavorsUsage:       st.FlavorUsage,
			FairSharing:        st.FairSharing,
		},
	}
}

// LocalQueueDown converts a v1beta2 LocalQueue to v1beta1.
func LocalQueueDown(in *v1beta2.LocalQueue) *v1beta1.LocalQueue {
	st := &in.Status
	return &v1beta1.LocalQueue{
		TypeMeta:   typeMeta(v1beta1.GroupVersion.String(), "LocalQueue"),
		ObjectMeta: in.ObjectMeta,
		Spec:       in.Spec,
		Status: v1beta1.LocalQueueStatus{
			Conditions:         st.Conditions,
			PendingWorkloads:   st.PendingWorkloads,
			ReservingWorkloads: st.ReservingWorkloads,
			AdmittedWorkloads:  st.AdmittedWorkloads,
			FlavorsReservation: st.FlavorsReservation,
			FlavorUsage:        st.FlavorsUsage,
			FairSharing:        st.FairSharing,
		},
	}
}

// CohortUp converts a v1beta1 Cohort to v1beta2 (the spec is the same; the
// status drops v1beta1's admission fair-sharing state).
func CohortUp(in *v1beta1.Cohort) *v1beta2.Cohort {
	return &v1beta2.Cohort{
		TypeMeta:   typeMeta(v1beta2.GroupVersion.String(), "Cohort"),
		ObjectMeta: in.ObjectMeta,
		Spec:       in.Spec,
		Status:     v1beta2.CohortStatus{FairSharing: fairSharingUp(in.Status.FairSharing)},
	}
}

// CohortDown converts a v1beta2 Cohort to v1beta1.
func CohortDown(in *v1beta2.Cohort) *v1beta1.Cohort {
	return &v1beta1.Cohort{
		TypeMeta:   typeMeta(v1beta1.GroupVersion.String(), "Cohort"),
		ObjectMeta: in.ObjectMeta,
		Spec:       in.Spec,
		Status:     v1beta1.CohortStatus{FairSharing: fairSharingDown(in.Status.FairSharing)},
	}
}

// MultiKueueClusterUp converts a v1beta1 MultiKueueCluster to v1beta2:
// kubeConfig and clusterProfileRef move under clusterSource.
func MultiKueueClusterUp(in *v1beta1.MultiKueueCluster) *v1beta2.MultiKueueCluster {
	out := &v1beta2.MultiKueueCluster{
		TypeMeta:   typeMeta(v1beta2.GroupVersion.String(), "MultiKueueCluster"),
		ObjectMeta: in.ObjectMeta,
		Spec:       v1beta2.MultiKueueClusterSpec{ClusterSource: v1beta2.ClusterSource{ClusterProfileRef: in.Spec.ClusterProfileRef}},
		Status:     in.Status,
	}
	if kc := in.Spec.KubeConfig; kc != nil {
		out.Spec.ClusterSource.KubeConfig = &v1beta2.KubeConfig{Location: kc.Location, LocationType: kc.LocationType}
	}
	return out
}

// MultiKueueClusterDown converts a v1beta2 MultiKueueCluster to v1beta1.
func MultiKueueClusterDown(in *v1beta2.MultiKueueCluster) *v1beta1.MultiKueueCluster {
	src := &in.Spec.ClusterSource
	out := &v1beta1.MultiKueueCluster{
		TypeMeta:   typeMeta(v1beta1.GroupVersion.String(), "MultiKueueCluster"),
		ObjectMeta: in.ObjectMeta,
		Spec:       v1beta1.MultiKueueClusterSpec{ClusterProfileRef: src.ClusterProfileRef},
		Status:     in.Status,
	}
	if kc := src.KubeConfig; kc != nil {
		out.Spec.KubeConfig = &v1beta1.KubeConfig{Location: kc.Location, LocationType: kc.LocationType}
	}
	return out
}
