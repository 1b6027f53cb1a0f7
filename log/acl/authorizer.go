package acl

import (
	"context"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// serviceName is the ACL store's name among the Dir's services.
const serviceName = "kafkalite.acls"

// Config is an Authorizer's policy (Kafka's StandardAuthorizer
// properties): the ACLs are the directory's, the policy the caller's.
type Config struct {
	// SuperUsers mirrors super.users (Kafka's default, none): principals
	// ("User:admin") allowed everything, whatever the ACLs say.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound mirrors allow.everyone.if.no.acl.found
	// (Kafka's default, false): a resource no ACL applies to is open to
	// every principal instead of closed.
	AllowEveryoneIfNoACLFound bool
}

// Authorizer decides what a principal may do, as Kafka's StandardAuthorizer
// does, over the ACLs of a directory, which it also creates, lists and
// deletes. It is safe for concurrent use; Authorize takes no lock.
type Authorizer struct {
	store      *store
	superUsers map[string]bool
	allowNoACL bool
}

// Open returns an Authorizer with policy cfg over d's ACLs. The ACLs are
// a service of the Dir ([log.Dir.Service]): the first Open loads them from
// the directory's ACL store (kafkalite-acls.json; a store that does not
// load is a [*CorruptStoreError]) and every Authorizer of d shares them,
// so that a change made through one is seen by all. They stay readable
// after d closes; changes then fail.
func Open(d *log.Dir, cfg Config) (*Authorizer, error) {
	svc, err := d.Service(serviceName, func(d *log.Dir) (log.Service, error) {
		fsys := d.Config().FS
		if fsys == nil {
			fsys = vfs.Default
		}
		return openStore(fsys, d.Path())
	})
	if err != nil {
		return nil, err
	}
	return newAuthorizer(svc.(*store), cfg), nil
}

func newAuthorizer(s *store, cfg Config) *Authorizer {
	a := &Authorizer{store: s, superUsers: map[string]bool{}, allowNoACL: cfg.AllowEveryoneIfNoACLFound}
	for _, u := range cfg.SuperUsers {
		a.superUsers[u] = true
	}
	return a
}

// Authorize reports whether principal ("User:alice"), connected from host
// (the client's IP address as Java prints it: "10.0.0.7",
// "0:0:0:0:0:0:0:1"), may perform op on res, as Kafka's StandardAuthorizer
// decides:
//
//   - a super user may do anything;
//   - the bindings that apply are those of res's type whose pattern is
//     LITERAL with res's name or [Wildcard], or PREFIXED with a prefix of
//     it, whose principal is principal or [WildcardPrincipal], whose host
//     admits host, and whose operation is op or ALL — or, for an ALLOW
//     binding, an operation that implies op: READ, WRITE, DELETE and ALTER
//     imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS;
//   - a DENY that applies wins over any ALLOW; an ALLOW that applies
//     allows;
//   - when none applies, op is denied if any binding has a pattern that
//     matches res (whoever it names), and otherwise allowed only with
//     AllowEveryoneIfNoACLFound.
func (a *Authorizer) Authorize(principal, host string, op Operation, res Resource) bool {
	if a.superUsers[principal] {
		return true
	}
	x := a.store.cur.Load()
	var found, allowed bool
	// check looks at one pattern's bindings; it reports a deny.
	check := func(k resourceKey) bool {
		for _, b := range x.byRes[k] {
			found = true
			switch applies(b, principal, host, op) {
			case Deny:
				return true
			case Allow:
				allowed = true
			}
		}
		return false
	}
	if check(resourceKey{res.Type, PatternLiteral, res.Name}) {
		return false
	}
	for i := min(len(res.Name), x.maxPrefix[res.Type]); i > 0; i-- {
		if check(resourceKey{res.Type, PatternPrefixed, res.Name[:i]}) {
			return false
		}
	}
	if res.Name != Wildcard && check(resourceKey{res.Type, PatternLiteral, Wildcard}) {
		return false
	}
	switch {
	case allowed:
		return true
	case found:
		return false
	}
	return a.allowNoACL
}

// applies is b's verdict on the action (PermissionUnknown: none), b's
// pattern matching its resource already.
func applies(b Binding, principal, host string, op Operation) PermissionType {
	if b.Principal != principal && b.Principal != WildcardPrincipal {
		return PermissionUnknown
	}
	if !hostMatches(b.Host, host) {
		return PermissionUnknown
	}
	if b.Operation != OpAll && b.Operation != op {
		if b.Permission != Allow {
			return PermissionUnknown
		}
		switch op {
		case OpDescribe:
			if b.Operation != OpRead && b.Operation != OpWrite && b.Operation != OpDelete && b.Operation != OpAlter {
				return PermissionUnknown
			}
		case OpDescribeConfigs:
			if b.Operation != OpAlterConfigs {
				return PermissionUnknown
			}
		default:
			return PermissionUnknown
		}
	}
	return b.Permission
}

// AuthorizedOperations lists the operations of res's type
// ([SupportedOperations]) that principal may perform on res, as Kafka
// reports them in Metadata, DescribeGroups and DescribeCluster.
func (a *Authorizer) AuthorizedOperations(principal, host string, res Resource) []Operation {
	var out []Operation
	for _, op := range SupportedOperations(res.Type) {
		if a.Authorize(principal, host, op, res) {
			out = append(out, op)
		}
	}
	return out
}

// CreateAcls adds bindings to the directory's ACLs, durably (the ACL store
// is written before it returns), as Kafka's CreateAcls does: each binding
// is checked ([Binding.Validate]) and gets its own error, nil for one
// created or already there; the valid ones are added together, all or
// none. The second result fails the whole call, nothing added: more than
// 10000 new bindings ([ErrBatchTooLarge]), a store that would pass its
// bound ([ErrStoreFull]), ctx's error, or the filesystem's.
func (a *Authorizer) CreateAcls(ctx context.Context, bindings []Binding) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return a.store.create(bindings)
}

// DescribeAcls lists the bindings f matches ([Filter.Matches]), sorted by
// resource type, name, pattern type, principal, host, operation and
// permission.
func (a *Authorizer) DescribeAcls(f Filter) []Binding { return a.store.describe(f) }

// DeleteAcls removes the bindings each filter matches, durably, in one
// write, as Kafka's DeleteAcls does: a filter with an UNKNOWN type gets an
// [*InvalidError] and removes nothing; a binding matched by two filters is
// reported by both. The second result fails the whole call, nothing
// removed: more than 10000 bindings matched (an [*InvalidError], Kafka's
// "Cannot remove more than 10000 acls in a single delete operation."),
// ctx's error, or the filesystem's.
func (a *Authorizer) DeleteAcls(ctx context.Context, filters []Filter) ([]DeleteResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return a.store.delete(filters)
}

// IsSuperUser reports whether principal is one of Config.SuperUsers.
func (a *Authorizer) IsSuperUser(principal string) bool { return a.superUsers[principal] }

// Count is the number of ACLs.
func (a *Authorizer) Count() int { return len(a.store.cur.Load().bindings) }
