package acl

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ResourceType is Kafka's ResourceType, by its wire code. These codes are
// part of Kafka's protocol and must not change.
type ResourceType int8

// Kafka's resource types. Any is for filters only; Unknown is what an
// unknown code reads as, and is refused everywhere.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// ClusterName is the name of the one CLUSTER resource (Kafka's
// "kafka-cluster"); an ACL on the cluster must name it.
const ClusterName = "kafka-cluster"

// Wildcard is the resource name, principal name and host that match any
// ("*"): a LITERAL pattern named "*" matches every resource of its type.
const Wildcard = "*"

// WildcardPrincipal is the principal every principal matches.
const WildcardPrincipal = "User:*"

var resourceTypeNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}

func (t ResourceType) String() string {
	if t >= 0 && int(t) < len(resourceTypeNames) {
		return resourceTypeNames[t]
	}
	return "UNKNOWN"
}

// ParseResourceType reads a code as Kafka's ResourceType.fromCode does: an
// unknown code is ResourceUnknown.
func ParseResourceType(code int8) ResourceType {
	if code < 0 || int(code) >= len(resourceTypeNames) {
		return ResourceUnknown
	}
	return ResourceType(code)
}

// PatternType is Kafka's PatternType, by its wire code.
type PatternType int8

// Kafka's pattern types: a binding's is Literal or Prefixed; a filter may
// also ask Any (any pattern, the name compared exactly) or Match (the
// patterns that would apply to a resource of that name).
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

var patternTypeNames = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}

func (p PatternType) String() string {
	if p >= 0 && int(p) < len(patternTypeNames) {
		return patternTypeNames[p]
	}
	return "UNKNOWN"
}

// ParsePatternType reads a code; an unknown one is PatternUnknown.
func ParsePatternType(code int8) PatternType {
	if code < 0 || int(code) >= len(patternTypeNames) {
		return PatternUnknown
	}
	return PatternType(code)
}

// Operation is Kafka's AclOperation, by its wire code.
type Operation int8

// Kafka's operations. Any is for filters only. All in a binding matches
// every operation.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
	OpTwoPhaseCommit  Operation = 15
)

var operationNames = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}

func (o Operation) String() string {
	if o >= 0 && int(o) < len(operationNames) {
		return operationNames[o]
	}
	return "UNKNOWN"
}

// ParseOperation reads a code; an unknown one is OpUnknown.
func ParseOperation(code int8) Operation {
	if code < 0 || int(code) >= len(operationNames) {
		return OpUnknown
	}
	return Operation(code)
}

// PermissionType is Kafka's AclPermissionType, by its wire code.
type PermissionType int8

// Kafka's permission types; Any is for filters only.
const (
	PermissionUnknown PermissionType = 0
	PermissionAny     PermissionType = 1
	Deny              PermissionType = 2
	Allow             PermissionType = 3
)

var permissionTypeNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}

func (p PermissionType) String() string {
	if p >= 0 && int(p) < len(permissionTypeNames) {
		return permissionTypeNames[p]
	}
	return "UNKNOWN"
}

// ParsePermissionType reads a code; an unknown one is PermissionUnknown.
func ParsePermissionType(code int8) PermissionType {
	if code < 0 || int(code) >= len(permissionTypeNames) {
		return PermissionUnknown
	}
	return PermissionType(code)
}

// SupportedOperations are the operations that mean something on a
// resource type (Kafka's AclEntry.supportedOperations), in Kafka's order:
// the operations an "authorized operations" answer reports.
func SupportedOperations(t ResourceType) []Operation {
	switch t {
	case ResourceTopic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []Operation{OpRead, OpDescribe, OpDelete, OpDescribeConfigs, OpAlterConfigs}
	case ResourceCluster:
		return []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case ResourceTransactionalID:
		return []Operation{OpDescribe, OpWrite, OpTwoPhaseCommit}
	case ResourceDelegationToken:
		return []Operation{OpDescribe}
	case ResourceUser:
		return []Operation{OpCreateTokens, OpDescribeTokens}
	}
	return nil
}

// Resource is what a request acts on: a resource type (not Any) and the
// resource's name, as Kafka's Action's literal ResourcePattern.
type Resource struct {
	Type ResourceType
	Name string
}

// Binding is one ACL (Kafka's AclBinding): a resource pattern and an
// access control entry. A Binding is a comparable value.
type Binding struct {
	ResourceType ResourceType
	// ResourceName is the resource's name, a prefix of names for
	// PatternPrefixed, or [Wildcard] for every resource of the type.
	ResourceName string
	PatternType  PatternType
	// Principal is "<type>:<name>", "User:alice" or [WildcardPrincipal].
	Principal string
	// Host is [Wildcard], an address the client's must equal, or (Kafka
	// 4.4) a CIDR block ("10.0.0.0/8") the client's must lie in.
	Host       string
	Operation  Operation
	Permission PermissionType
}

func (b Binding) String() string {
	return fmt.Sprintf("(pattern=ResourcePattern(resourceType=%s, name=%s, patternType=%s), entry=(principal=%s, host=%s, operation=%s, permissionType=%s))",
		b.ResourceType, b.ResourceName, b.PatternType, b.Principal, b.Host, b.Operation, b.Permission)
}

// ErrInvalid is matched by [*InvalidError]: a binding or filter Kafka
// refuses (INVALID_REQUEST on the wire).
var ErrInvalid = errors.New("acl: invalid ACL")

// InvalidError is a binding or filter refused, with Kafka's message. It
// matches [ErrInvalid].
type InvalidError struct {
	Reason string
}

func (e *InvalidError) Error() string { return "acl: " + e.Reason }

// Is matches ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Validate checks a binding to be created as Kafka 4.4 does (its broker's
// AclApis, then its controller's AclControlManager.validateNewAcl), in
// Kafka's order and with Kafka's messages: a CLUSTER pattern must name
// [ClusterName]; the name must not be empty; the resource type must not be
// ANY or UNKNOWN, the pattern LITERAL or PREFIXED, the operation and the
// permission neither ANY nor UNKNOWN; the principal must hold a colon
// (nothing else of it is checked); the host must not be empty, and one
// holding a "/" must be a CIDR block.
func (b Binding) Validate() error {
	switch {
	case b.ResourceType == ResourceCluster && b.ResourceName != ClusterName:
		return invalid("The only valid name for the CLUSTER resource is %s", ClusterName)
	case b.ResourceName == "":
		return invalid("Invalid empty resource name")
	case b.ResourceType == ResourceUnknown || b.ResourceType == ResourceAny || b.ResourceType.String() == "UNKNOWN":
		return invalid("Invalid resourceType %s", b.ResourceType)
	case b.PatternType != PatternLiteral && b.PatternType != PatternPrefixed:
		return invalid("Invalid patternType %s", b.PatternType)
	case b.Operation == OpUnknown || b.Operation == OpAny || b.Operation.String() == "UNKNOWN":
		return invalid("Invalid operation %s", b.Operation)
	case b.Permission != Allow && b.Permission != Deny:
		return invalid("Invalid permissionType %s", b.Permission)
	case !strings.Contains(b.Principal, ":"):
		return invalid("Could not parse principal from `%s` (no colon is present separating the principal type from the principal name)", b.Principal)
	case b.Host == "":
		return invalid("Host pattern cannot be null or empty")
	case b.Host != Wildcard && strings.Contains(b.Host, "/"):
		if _, err := parseCIDR(b.Host); err != nil {
			return invalid("Invalid CIDR notation '%s': %v", b.Host, err)
		}
	}
	return nil
}

// parseCIDR reads a host pattern holding a "/" as Kafka's CidrUtils does:
// IPv6 if it holds a colon, else IPv4.
func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if strings.Contains(s, ":") != p.Addr().Is6() {
		return netip.Prefix{}, fmt.Errorf("%q is not an IPv%d block", s, map[bool]int{true: 6, false: 4}[strings.Contains(s, ":")])
	}
	return p, nil
}

// hostMatches reports whether an entry's host admits a client's: the
// wildcard, the same string, or a CIDR block holding the address.
func hostMatches(pattern, host string) bool {
	if pattern == Wildcard || pattern == host {
		return true
	}
	if !strings.Contains(pattern, "/") {
		return false
	}
	p, err := parseCIDR(pattern)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Is4() != p.Addr().Is4() {
		return false
	}
	return p.Contains(a)
}

// Filter selects bindings (Kafka's AclBindingFilter). A nil name,
// principal or host matches any; Any types match any.
type Filter struct {
	ResourceType ResourceType // a type, or ResourceAny
	// ResourceName nil matches any name. With PatternMatch it is the name
	// of a resource, and the filter selects the bindings that apply to
	// it: the literal ones of that name or [Wildcard], the prefixed ones
	// whose prefix it starts with.
	ResourceName *string
	PatternType  PatternType // a type, PatternAny or PatternMatch
	Principal    *string
	Host         *string
	Operation    Operation      // an operation, or OpAny
	Permission   PermissionType // a permission, or PermissionAny
}

// FilterAll matches every binding.
var FilterAll = Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}

// Matches reports whether the filter selects b, as Kafka's
// AclBindingFilter.matches does.
func (f Filter) Matches(b Binding) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != b.ResourceType {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != b.PatternType {
		return false
	}
	if f.ResourceName != nil {
		name := *f.ResourceName
		switch {
		case f.PatternType == PatternAny || f.PatternType == b.PatternType:
			if name != b.ResourceName {
				return false
			}
		case b.PatternType == PatternLiteral:
			if name != b.ResourceName && b.ResourceName != Wildcard {
				return false
			}
		case b.PatternType == PatternPrefixed:
			if !strings.HasPrefix(name, b.ResourceName) {
				return false
			}
		default:
			return false
		}
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != b.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == b.Permission
}

// validateDelete checks a deletion's filter as Kafka's controller does.
func (f Filter) validateDelete() error {
	if f.ResourceType.String() == "UNKNOWN" || f.PatternType.String() == "UNKNOWN" {
		return invalid("Unknown patternFilter.")
	}
	if f.Operation.String() == "UNKNOWN" || f.Permission.String() == "UNKNOWN" {
		return invalid("Unknown entryFilter.")
	}
	return nil
}
