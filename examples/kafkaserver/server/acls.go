package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log/acl"
)

// errUnknownACLElement is why a connection whose ACL request holds an
// UNKNOWN (or unknown) resource type, pattern type, operation or
// permission is closed: Kafka fails to parse such a request and closes
// the connection.
var errUnknownACLElement = fmt.Errorf("%w: an ACL request with UNKNOWN elements", ErrBadFrame)

func unknownACLElement(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, op kmsg.ACLOperation, pm kmsg.ACLPermissionType) bool {
	return acl.ParseResourceType(int8(rt)) == acl.ResourceUnknown || acl.ParsePatternType(int8(pt)) == acl.PatternUnknown ||
		acl.ParseOperation(int8(op)) == acl.OpUnknown || acl.ParsePermissionType(int8(pm)) == acl.PermissionUnknown
}

// aclError is an ACL call's error as Kafka's code and message.
func aclError(err error) (int16, *string) {
	msg := err.Error()
	var inv *acl.InvalidError
	switch {
	case errors.As(err, &inv):
		msg = inv.Reason
		return errInvalidRequest, &msg
	case errors.Is(err, acl.ErrBatchTooLarge):
		msg = "Unable to perform excessively large batch operation."
		return errPolicyViolation, &msg
	case errors.Is(err, acl.ErrStoreFull):
		return errPolicyViolation, &msg
	}
	return errUnknownServerError, &msg
}

func (s *Server) handleCreateACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := kmsg.NewPtrCreateACLsResponse()
	bindings := make([]acl.Binding, len(req.Creations))
	for i, c := range req.Creations {
		if unknownACLElement(c.ResourceType, c.ResourcePatternType, c.Operation, c.PermissionType) {
			return nil, errUnknownACLElement
		}
		bindings[i] = acl.Binding{ResourceType: acl.ResourceType(c.ResourceType), ResourceName: c.ResourceName,
			PatternType: acl.PatternType(c.ResourcePatternType), Principal: c.Principal, Host: c.Host,
			Operation: acl.Operation(c.Operation), Permission: acl.PermissionType(c.PermissionType)}
	}
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	set := func(i int, code int16, msg *string) {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = code, msg
		resp.Results[i] = r
	}
	if s.authz == nil {
		msg := "No Authorizer is configured."
		for i := range resp.Results {
			set(i, errSecurityDisabled, &msg)
		}
		return resp, nil
	}
	errs, err := s.authz.CreateAcls(ctx, bindings)
	for i := range resp.Results {
		e := err
		if e == nil {
			e = errs[i]
		}
		if e == nil {
			set(i, errNone, nil)
			continue
		}
		code, msg := aclError(e)
		set(i, code, msg)
	}
	return resp, nil
}

func (s *Server) handleDescribeACLs(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeACLsRequest)
	if unknownACLElement(req.ResourceType, req.ResourcePatternType, req.Operation, req.PermissionType) {
		return nil, errUnknownACLElement
	}
	resp := kmsg.NewPtrDescribeACLsResponse()
	if s.authz == nil {
		msg := "No Authorizer is configured on the broker"
		resp.ErrorCode, resp.ErrorMessage = errSecurityDisabled, &msg
		return resp, nil
	}
	f := acl.Filter{ResourceType: acl.ResourceType(req.ResourceType), ResourceName: req.ResourceName,
		PatternType: acl.PatternType(req.ResourcePatternType), Principal: req.Principal, Host: req.Host,
		Operation: acl.Operation(req.Operation), Permission: acl.PermissionType(req.PermissionType)}
	// Sorted by pattern first: one resource entry per pattern.
	for _, b := range s.authz.DescribeAcls(f) {
		n := len(resp.Resources)
		if n == 0 || resp.Resources[n-1].ResourceType != kmsg.ACLResourceType(b.ResourceType) ||
			resp.Resources[n-1].ResourceName != b.ResourceName || resp.Resources[n-1].ResourcePatternType != kmsg.ACLResourcePatternType(b.PatternType) {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
			resp.Resources = append(resp.Resources, r)
			n++
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, a)
	}
	return resp, nil
}

func (s *Server) handleDeleteACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteACLsRequest)
	filters := make([]acl.Filter, len(req.Filters))
	for i, f := range req.Filters {
		if unknownACLElement(f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType) {
			return nil, errUnknownACLElement
		}
		filters[i] = acl.Filter{ResourceType: acl.ResourceType(f.ResourceType), ResourceName: f.ResourceName,
			PatternType: acl.PatternType(f.ResourcePatternType), Principal: f.Principal, Host: f.Host,
			Operation: acl.Operation(f.Operation), Permission: acl.PermissionType(f.PermissionType)}
	}
	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	if s.authz == nil {
		msg := "No Authorizer is configured."
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = errSecurityDisabled, &msg
		}
		return resp, nil
	}
	results, err := s.authz.DeleteAcls(ctx, filters)
	for i := range resp.Results {
		r := &resp.Results[i]
		switch {
		case err != nil:
			r.ErrorCode, r.ErrorMessage = aclError(err)
		case results[i].Err != nil:
			r.ErrorCode, r.ErrorMessage = aclError(results[i].Err)
		default:
			for _, b := range results[i].Deleted {
				m := kmsg.NewDeleteACLsResponseResultMatchingACL()
				m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
				m.Principal, m.Host, m.Operation, m.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
				r.MatchingACLs = append(r.MatchingACLs, m)
			}
		}
	}
	return resp, nil
}
