package conversion

import (
	"fmt"

	"github.com/kuota-dev/kuota/api/kueue/v1beta1"
	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/tas"
)

// WorkloadUp converts a v1beta1 Workload to v1beta2: priorityClassName and
// priorityClassSource become priorityClassRef, the misspelt
// accumulatedPastExexcutionTimeSeconds is spelt right, and topology
// assignments listed domain by domain are encoded in slices. It fails, naming
// the field, on a topology domain whose values do not match its levels.
func WorkloadUp(in *v1beta1.Workload) (*v1beta2.Workload, error) {
	s, st := &in.Spec, &in.Status
	admission, err := admissionUp(st.Admission)
	if err != nil {
		return nil, err
	}
	return &v1beta2.Workload{
		TypeMeta:   typeMeta(v1beta2.GroupVersion.String(), "Workload"),
		ObjectMeta: in.ObjectMeta,
		Spec: v1beta2.WorkloadSpec{
			PodSets:                     s.PodSets,
			QueueName:                   s.QueueName,
			PriorityClassRef:            priorityClassUp(s.PriorityClassName, s.PriorityClassSource),
			Priority:                    s.Priority,
			Active:                      s.Active,
			MaximumExecutionTimeSeconds: s.MaximumExecutionTimeSeconds,
			PreemptionGates:             s.PreemptionGates,
		},
		Status: v1beta2.WorkloadStatus{
			Conditions:                          st.Conditions,
			Admission:                           admission,
			RequeueState:                        st.RequeueState,
			ReclaimablePods:                     st.ReclaimablePods,
			AdmissionChecks:                     st.AdmissionChecks,
			ResourceRequests:                    st.ResourceRequests,
			AccumulatedPastExecutionTimeSeconds: st.AccumulatedPastExexcutionTimeSeconds,
			SchedulingStats:                     st.SchedulingStats,
			NominatedClusterNames:               st.NominatedClusterNames,
			ClusterName:                         st.ClusterName,
			UnhealthyNodes:                      st.UnhealthyNodes,
			PreemptionGates:                     st.PreemptionGates,
		},
	}, nil
}

// WorkloadDown converts a v1beta2 Workload to v1beta1. It fails, naming the
// field, on a malformed topology assignment.
func WorkloadDown(in *v1beta2.Workload) (*v1beta1.Workload, error) {
	s, st := &in.Spec, &in.Status
	admission, err := admissionDown(st.Admission)
	if err != nil {
		return nil, err
	}
	name, source := priorityClassDown(s.PriorityClassRef)
	return &v1beta1.Workload{
		TypeMeta:   typeMeta(v1beta1.GroupVersion.String(), "Workload"),
		ObjectMeta: in.ObjectMeta,
		Spec: v1beta1.WorkloadSpec{
			PodSets:                     s.PodSets,
			QueueName:                   s.QueueName,
			PriorityClassName:           name,
			Priority:                    s.Priority,
			PriorityClassSource:         source,
			Active:                      s.Active,
			MaximumExecutionTimeSeconds: s.MaximumExecutionTimeSeconds,
			PreemptionGates:             s.PreemptionGates,
		},
		Status: v1beta1.WorkloadStatus{
			Conditions:                           st.Conditions,
			Admission:                            admission,
			RequeueState:                         st.RequeueState,
			ReclaimablePods:                      st.ReclaimablePods,
			AdmissionChecks:                      st.AdmissionChecks,
			ResourceRequests:                     st.ResourceRequests,
			AccumulatedPastExexcutionTimeSeconds: st.AccumulatedPastExecutionTimeSeconds,
			SchedulingStats:                      st.SchedulingStats,
			NominatedClusterNames:                st.NominatedClusterNames,
			ClusterName:                          st.ClusterName,
			UnhealthyNodes:                       st.UnhealthyNodes,
			PreemptionGates:                      st.PreemptionGates,
		},
	}, nil
}

// priorityClassUp reads v1beta1's name and source. A name without a source
// is a pod PriorityClass, as in Workloads made before WorkloadPriorityClass.
func priorityClassUp(name, source string) *v1beta2.PriorityClassRef {
	if name == "" {
		return nil
	}
	if source == v1beta1.WorkloadPriorityClassSource {
		return &v1beta2.PriorityClassRef{Group: v1beta2.WorkloadPriorityClassGroup, Kind: v1beta2.WorkloadPriorityClassKind, Name: name}
	}
	return &v1beta2.PriorityClassRef{Group: v1beta2.PodPriorityClassGroup, Kind: v1beta2.PodPriorityClassKind, Name: name}
}

func priorityClassDown(ref *v1beta2.PriorityClassRef) (name, source string) {
	if ref == nil {
		return "", ""
	}
	if ref.Group == v1beta2.WorkloadPriorityClassGroup {
		return ref.Name, v1beta1.WorkloadPriorityClassSource
	}
	return ref.Name, v1beta1.PodPriorityClassSource
}

func admissionUp(in *v1beta1.Admission) (*v1beta2.Admission, error) {
	if in == nil {
		return nil, nil
	}
	out := &v1beta2.Admission{ClusterQueue: in.ClusterQueue}
	for i, a := range in.PodSetAssignments {
		ta, err := topologyUp(a.TopologyAssignment)
		if err != nil {
			return nil, fmt.Errorf("status.admission.podSetAssignments[%d].topologyAssignment.%w", i, err)
		}
		out.PodSetAssignments = append(out.PodSetAssignments, v1beta2.PodSetAssignment{
			Name: a.Name, Flavors: a.Flavors, ResourceUsage: a.ResourceUsage, Count: a.Count,
			TopologyAssignment: ta, DelayedTopologyRequest: a.DelayedTopologyRequest,
		})
	}
	return out, nil
}

func admissionDown(in *v1beta2.Admission) (*v1beta1.Admission, error) {
	if in == nil {
		return nil, nil
	}
	out := &v1beta1.Admission{ClusterQueue: in.ClusterQueue, PodSetAssignments: []v1beta1.PodSetAssignment{}}
	for i, a := range in.PodSetAssignments {
		ta, err := topologyDown(a.TopologyAssignment)
		if err != nil {
			return nil, fmt.Errorf("status.admission.podSetAssignments[%d].topologyAssignment.%w", i, err)
		}
		out.PodSetAssignments = append(out.PodSetAssignments, v1beta1.PodSetAssignment{
			Name: a.Name, Flavors: a.Flavors, ResourceUsage: a.ResourceUsage, Count: a.Count,
			TopologyAssignment: ta, DelayedTopologyRequest: a.DelayedTopologyRequest,
		})
	}
	return out, nil
}

func topologyUp(in *v1beta1.TopologyAssignment) (*v1beta2.TopologyAssignment, error) {
	if in == nil {
		return nil, nil
	}
	domains := make([]tas.Domain, len(in.Domains))
	for i, d := range in.Domains {
		if len(d.Values) != len(in.Levels) {
			return nil, fmt.Errorf("domains[%d].values: %d values for %d levels", i, len(d.Values), len(in.Levels))
		}
		domains[i] = tas.Domain{Values: d.Values, Count: d.Count}
	}
	return tas.Encode(in.Levels, domains), nil
}

func topologyDown(in *v1beta2.TopologyAssignment) (*v1beta1.TopologyAssignment, error) {
	if in == nil {
		return nil, nil
	}
	domains, err := tas.Domains(in)
	if err != nil {
		return nil, err
	}
	out := &v1beta1.TopologyAssignment{Levels: in.Levels, Domains: make([]v1beta1.TopologyDomainAssignment, len(domains))}
	for i, d := range domains {
		out.Domains[i] = v1beta1.TopologyDomainAssignment{Values: d.Values, Count: d.Count}
	}
	return out, nil
}
