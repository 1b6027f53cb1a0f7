// Package acl is Kafka's authorization model on a kafkalite directory:
// ACLs (Kafka's AclBinding: a resource pattern and an access control
// entry), kept in the directory, and an [Authorizer] that decides, as
// Kafka's StandardAuthorizer decides, whether a principal may perform an
// operation on a resource. A broker on kafkalite (the wire server in
// examples/kafkaserver is one) consults it on every request and serves
// CreateAcls, DescribeAcls and DeleteAcls with it; an embedded service
// consults the same ACLs.
//
// # The model
//
// A binding names a resource type (TOPIC, GROUP, CLUSTER,
// TRANSACTIONAL_ID, DELEGATION_TOKEN, USER), a resource name and a
// pattern type: LITERAL (that name, or every resource of the type for the
// name "*") or PREFIXED (every name starting with it); then a principal
// ("User:alice", or "User:*" for everyone), a host ("*", an address, or a
// CIDR block as Kafka 4.4 allows), an operation and ALLOW or DENY.
// Filters ([Filter]) select bindings for DescribeAcls and DeleteAcls and
// may also say ANY, and MATCH for the bindings that apply to a name.
//
// [Authorizer.Authorize] follows Kafka's rules: super users
// (super.users) may do anything; a DENY that applies wins; READ, WRITE,
// DELETE and ALTER allowed imply DESCRIBE, ALTER_CONFIGS allowed implies
// DESCRIBE_CONFIGS (a DENY implies nothing); a resource with ACLs, none
// of which allow, is denied; a resource with none is denied unless
// allow.everyone.if.no.acl.found.
//
// # Where the ACLs are kept
//
// In the log directory, as a [log.Dir] service: the file
// kafkalite-acls.json (its format is in store.go), written whole and
// atomically (temporary file, fsync, rename, directory fsync) before a
// change returns, so that after a crash it holds the ACLs before or after
// the change, never a mix. Kafka keeps them in its KRaft metadata log as
// AccessControlEntryRecords. The policy (super users, the default) is
// not the directory's but the caller's: [Config].
package acl
