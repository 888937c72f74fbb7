package v1beta2

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	maxDeviceClassMappings     = 16
	maxDeviceClassesPerMapping = 8
	maxQualifiedNameLength     = 253
)

var (
	resourcesPath       = field.NewPath("resources")
	transformationsPath = resourcesPath.Child("transformations")
	deviceMappingsPath  = resourcesPath.Child("deviceClassMappings")

	// celParser parses device selector expressions. Only the syntax is
	// checked; type checking needs the DRA device environment.
	celParser = sync.OnceValues(func() (*cel.Env, error) { return cel.NewEnv() })
)

func validateResources(r *Resources) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if s := r.QuotaCheckStrategy; s != nil {
		p := resourcesPath.Child("quotaCheckStrategy")
		switch *s {
		case QuotaCheckBlockUndeclared:
		case QuotaCheckIgnoreUndeclared:
			if len(r.ExcludeResourcePrefixes) > 0 {
				errs = append(errs, field.Invalid(p, *s,
					"may not be IgnoreUndeclared when excludeResourcePrefixes is set"))
			}
		default:
			errs = append(errs, field.NotSupported(p, *s,
				[]QuotaCheckStrategy{QuotaCheckBlockUndeclared, QuotaCheckIgnoreUndeclared}))
		}
	}
	inputs := map[corev1.ResourceName]bool{}
	for i, t := range r.Transformations {
		p := transformationsPath.Index(i)
		if t.Strategy != nil && *t.Strategy != Retain && *t.Strategy != Replace {
			errs = append(errs, field.NotSupported(p.Child("strategy"), *t.Strategy,
				[]ResourceTransformationStrategy{Retain, Replace}))
		}
		if inputs[t.Input] {
			errs = append(errs, field.Duplicate(p.Child("input"), t.Input))
		}
		inputs[t.Input] = true
	}
	return append(errs, validateDeviceClassMappings(r.DeviceClassMappings)...)
}

// deviceClassOwner records which mapping first claimed a device class, and
// the counter names used for it, so that a class is shared only between
// counter mappings with distinct counters.
type deviceClassOwner struct {
	resource corev1.ResourceName
	counters map[string]bool
}

func validateDeviceClassMappings(mappings []DeviceClassMapping) field.ErrorList {
	if len(mappings) == 0 {
		return nil
	}
	var errs field.ErrorList
	if len(mappings) > maxDeviceClassMappings {
		errs = append(errs, field.TooMany(deviceMappingsPath, len(mappings), maxDeviceClassMappings))
	}
	names := map[corev1.ResourceName]bool{}
	owners := map[corev1.ResourceName]*deviceClassOwner{}
	for i, m := range mappings {
		p := deviceMappingsPath.Index(i)
		errs = append(errs, qualifiedNameErrors(string(m.Name), p.Child("name"))...)
		if names[m.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), m.Name))
		}
		names[m.Name] = true
		errs = append(errs, validateDeviceClassNames(m, p.Child("deviceClassNames"), owners)...)
		errs = append(errs, validateDeviceSources(m.Sources, p.Child("sources"))...)
	}
	return errs
}

func validateDeviceClassNames(m DeviceClassMapping, p *field.Path, owners map[corev1.ResourceName]*deviceClassOwner) field.ErrorList {
	var errs field.ErrorList
	switch n := len(m.DeviceClassNames); {
	case n == 0:
		errs = append(errs, field.Required(p, "must list at least one device class"))
	case n > maxDeviceClassesPerMapping:
		errs = append(errs, field.TooMany(p, n, maxDeviceClassesPerMapping))
	}
	counter := ""
	if len(m.Sources) > 0 && m.Sources[0].Counter != nil {
		counter = m.Sources[0].Counter.Name
	}
	seen := map[corev1.ResourceName]bool{}
	for j, dc := range m.DeviceClassNames {
		dp := p.Index(j)
		errs = append(errs, qualifiedNameErrors(string(dc), dp)...)
		if seen[dc] {
			errs = append(errs, field.Duplicate(dp, dc))
			continue
		}
		seen[dc] = true
		owner, claimed := owners[dc]
		switch {
		case !claimed:
			owners[dc] = &deviceClassOwner{resource: m.Name, counters: map[string]bool{counter: counter != ""}}
		case owner.resource == m.Name:
		case counter == "" || !anyCounter(owner.counters):
			errs = append(errs, field.Invalid(dp, dc, fmt.Sprintf("device class is already mapped to resource %s", owner.resource)))
		case owner.counters[counter]:
			errs = append(errs, field.Invalid(dp, dc, fmt.Sprintf("device class already has a source for counter %q", counter)))
		default:
			owner.counters[counter] = true
		}
	}
	return errs
}

func anyCounter(counters map[string]bool) bool {
	for _, used := range counters {
		if used {
			return true
		}
	}
	return false
}

func validateDeviceSources(sources []DeviceClassSourceConfig, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	counters, capacities := 0, 0
	for i, s := range sources {
		sp := p.Index(i)
		switch {
		case s.Counter == nil && s.Capacity == nil:
			errs = append(errs, field.Required(sp, "exactly one of counter or capacity must be set"))
		case s.Counter != nil && s.Capacity != nil:
			errs = append(errs, field.Forbidden(sp, "exactly one of counter or capacity must be set"))
		case s.Counter != nil:
			counters++
			cp := sp.Child("counter")
			errs = append(errs, counterNameErrors(s.Counter.Name, cp.Child("name"))...)
			errs = append(errs, validateDeviceSource(s.Counter.Driver, s.Counter.DeviceSelector, cp)...)
		default:
			capacities++
			cp := sp.Child("capacity")
			errs = append(errs, resourceQualifiedNameErrors(string(s.Capacity.Name), cp.Child("name"))...)
			errs = append(errs, validateDeviceSource(s.Capacity.Driver, s.Capacity.DeviceSelector, cp)...)
		}
	}
	if counters > 0 && capacities > 0 {
		errs = append(errs, field.Forbidden(p, "may not mix counter and capacity sources"))
	}
	return errs
}

func validateDeviceSource(driver string, selector resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	dp := p.Child("driver")
	switch {
	case driver == "":
		errs = append(errs, field.Required(dp, "must be set"))
	case len(driver) > resourcev1.DriverNameMaxLength:
		errs = append(errs, field.TooLong(dp, driver, resourcev1.DriverNameMaxLength))
	default:
		for _, msg := range content.IsDNS1123Subdomain(driver) {
			errs = append(errs, field.Invalid(dp, driver, msg))
		}
	}
	ep := p.Child("deviceSelector", "cel", "expression")
	if selector.CEL == nil || strings.TrimSpace(selector.CEL.Expression) == "" {
		return append(errs, field.Required(ep, "must be set"))
	}
	env, err := celParser()
	if err != nil {
		return append(errs, field.InternalError(ep, fmt.Errorf("creating CEL environment: %w", err)))
	}
	if _, issues := env.Parse(selector.CEL.Expression); issues != nil && issues.Err() != nil {
		errs = append(errs, field.Invalid(ep, selector.CEL.Expression, "invalid CEL expression: "+issues.Err().Error()))
	}
	return errs
}

func counterNameErrors(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "must be set")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func qualifiedNameErrors(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range content.IsLabelKey(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(name) > maxQualifiedNameLength {
		errs = append(errs, field.TooLong(p, name, maxQualifiedNameLength))
	}
	return errs
}

// resourceQualifiedNameErrors checks a DRA qualified name: a C identifier,
// optionally prefixed by a DNS subdomain and a slash.
func resourceQualifiedNameErrors(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	domain, id, hasDomain := strings.Cut(name, "/")
	if !hasDomain {
		id = domain
	}
	if hasDomain {
		switch {
		case domain == "":
			errs = append(errs, field.Invalid(p, name, "the domain must not be empty"))
		case len(domain) > resourcev1.DeviceMaxDomainLength:
			errs = append(errs, field.TooLong(p, name, resourcev1.DeviceMaxDomainLength))
		default:
			for _, msg := range content.IsDNS1123Subdomain(strings.ToLower(domain)) {
				errs = append(errs, field.Invalid(p, name, msg))
			}
		}
	}
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(p, name, resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
