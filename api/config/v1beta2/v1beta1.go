package v1beta2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// V1beta1 is the older apiVersion of the Configuration kind. Files in it
// are still read: they are turned into v1beta2 before decoding, as Kueue
// does, so a Kueue installation's configuration works unchanged.
const V1beta1 = GroupName + "/v1beta1"

// v1beta1 defaults that v1beta2 dropped or changed, applied to an enabled
// block before it is converted.
const (
	v1beta1PodsReadyTimeout = "5m"
)

var v1beta1PreemptionStrategies = []any{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}

// upgradeV1beta1 turns a v1beta1 Configuration, as JSON, into v1beta2:
//
//   - waitForPodsReady and fairSharing had an enable switch; in v1beta2 the
//     block's presence is the switch. A block with enable false (or unset)
//     is dropped; an enabled one loses the switch and gets v1beta1's
//     defaults where unset (a 5m timeout and blockAdmission true; both
//     preemption strategies).
//   - integrations.podOptions and queueVisibility, deprecated in v1beta1 and
//     gone in v1beta2, are dropped.
//   - controller.cacheSyncTimeout was a number of nanoseconds; it becomes a
//     duration string.
//
// Everything else has the same name and shape in both versions and is left
// to the strict decoder, which names any field v1beta2 does not know.
func upgradeV1beta1(jsonData []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(jsonData))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding configuration: %w", err)
	}
	doc["apiVersion"] = GroupVersion.String()
	if err := switchedBlock(doc, "waitForPodsReady", func(b map[string]any) {
		setDefault(b, "timeout", v1beta1PodsReadyTimeout)
		setDefault(b, "blockAdmission", true)
	}); err != nil {
		return nil, err
	}
	if err := switchedBlock(doc, "fairSharing", func(b map[string]any) {
		setDefault(b, "preemptionStrategies", v1beta1PreemptionStrategies)
	}); err != nil {
		return nil, err
	}
	delete(doc, "queueVisibility")
	if integrations, ok := doc["integrations"].(map[string]any); ok {
		delete(integrations, "podOptions")
	}
	if controller, ok := doc["controller"].(map[string]any); ok {
		if n, ok := controller["cacheSyncTimeout"].(json.Number); ok {
			ns, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("decoding configuration: controller.cacheSyncTimeout: want nanoseconds as an integer, got %s", n)
			}
			controller["cacheSyncTimeout"] = time.Duration(ns).String()
		}
	}
	return json.Marshal(doc)
}

// switchedBlock drops doc[name] unless its enable is true, and otherwise
// removes enable and applies defaults.
func switchedBlock(doc map[string]any, name string, defaults func(map[string]any)) error {
	raw, present := doc[name]
	if !present || raw == nil {
		delete(doc, name)
		return nil
	}
	block, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("decoding configuration: %s: want an object", name)
	}
	enable, present := block["enable"]
	on, isBool := enable.(bool)
	if present && !isBool {
		return fmt.Errorf("decoding configuration: %s.enable: want true or false, got %v", name, enable)
	}
	if !on {
		delete(doc, name)
		return nil
	}
	delete(block, "enable")
	defaults(block)
	return nil
}

func setDefault(block map[string]any, key string, value any) {
	if _, ok := block[key]; !ok {
		block[key] = value
	}
}
