package why

import (
	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/sim"
)

// setupOf is the queue configuration of a live state, as the simulator
// and the cache take it.
func setupOf(st *State) *sim.Setup {
	s := &sim.Setup{Namespaces: st.Namespaces, AdmissionChecks: map[kueue.AdmissionCheckReference]bool{}}
	for i := range st.Flavors {
		s.Flavors = append(s.Flavors, &st.Flavors[i])
	}
	for i := range st.Cohorts {
		s.Cohorts = append(s.Cohorts, &st.Cohorts[i])
	}
	for i := range st.ClusterQueues {
		s.ClusterQueues = append(s.ClusterQueues, &st.ClusterQueues[i])
	}
	for i := range st.LocalQueues {
		s.LocalQueues = append(s.LocalQueues, &st.LocalQueues[i])
	}
	for i := range st.Priorities {
		s.Priorities = append(s.Priorities, &st.Priorities[i])
	}
	for i := range st.Topologies {
		s.Topologies = append(s.Topologies, &st.Topologies[i])
	}
	for i := range st.Nodes {
		s.Nodes = append(s.Nodes, &st.Nodes[i])
	}
	for i := range st.Pods {
		s.Pods = append(s.Pods, &st.Pods[i])
	}
	for i := range st.AdmissionChecks {
		ac := &st.AdmissionChecks[i]
		s.AdmissionChecks[kueue.AdmissionCheckReference(ac.Name)] = checkActive(ac)
		if s.CheckControllers == nil {
			s.CheckControllers = map[kueue.AdmissionCheckReference]string{}
		}
		s.CheckControllers[kueue.AdmissionCheckReference(ac.Name)] = ac.Spec.ControllerName
	}
	return s
}

// checkActive reads an AdmissionCheck's Active condition.
func checkActive(ac *kueue.AdmissionCheck) bool {
	return meta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive)
}
