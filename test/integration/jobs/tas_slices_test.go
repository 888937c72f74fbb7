package jobs

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/tas"
)

// A Job asking for multi-layer slices (racks of 4 pods made of hosts of 2)
// is placed so that every rack holds whole slices of 4 and every host
// whole slices of 2. With 2 CPUs taken on host a1, filling the fullest
// hosts alone would put 2 pods on a1, 4 on a2 and 2 on b1: 6 in rack a.
func TestJobWithMultiLayerSlices(t *testing.T) {
	startManager(t)
	ns, hosts := tasQueues(t, nil)
	occupy(t, ns, ns+"-a1", "2")
	j := newJob(ns, "sliced", "lq", 8, "1")
	j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-slice-required-topology-constraints": fmt.Sprintf(
		`[{"topology": %q, "size": 4}, {"topology": %q, "size": 2}]`, rackLabel, corev1.LabelHostname)}
	create(t, j)
	eventually(t, "the job placed in whole slices", func() error {
		wl := workloadOf(t, getJob(t, ns, "sliced"))
		if wl == nil || wl.Status.Admission == nil {
			return fmt.Errorf("not admitted yet")
		}
		if n := len(wl.Spec.PodSets[0].TopologyRequest.PodsetSliceRequiredTopologyConstraints); n != 2 {
			return fmt.Errorf("the Workload has %d slice layers, want the annotation's 2", n)
		}
		ta := wl.Status.Admission.PodSetAssignments[0].TopologyAssignment
		if ta == nil {
			return fmt.Errorf("admitted without a topology assignment")
		}
		doms, err := tas.Domains(ta)
		if err != nil {
			return err
		}
		perRack, total := map[string]int32{}, int32(0)
		for _, d := range doms {
			if d.Count%2 != 0 {
				return fmt.Errorf("host %s holds %d pods, not whole slices of 2: %v", d.Values[0], d.Count, doms)
			}
			perRack[hosts[d.Values[0]]] += d.Count
			total += d.Count
		}
		for rack, n := range perRack {
			if n%4 != 0 {
				return fmt.Errorf("rack %s holds %d pods, not whole slices of 4: %v", rack, n, doms)
			}
		}
		if total != 8 {
			return fmt.Errorf("placed %d pods, want 8", total)
		}
		return nil
	})
}
