package server

import (
	"context"
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// scramCode maps a SCRAM administration error of log to Kafka's code.
func scramCode(err error) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, log.ErrUnsupportedSASLMechanism):
		return errUnsupportedSASLMechanism
	case errors.Is(err, log.ErrUnacceptableCredential):
		return errUnacceptableCredential
	case errors.Is(err, log.ErrResourceNotFound):
		return errResourceNotFound
	case errors.Is(err, log.ErrDuplicateResource):
		return errDuplicateResource
	case errors.Is(err, log.ErrStoreFull):
		return errPolicyViolation
	}
	return codeOf(err)
}

// scramMessage is the error's message as Kafka words it: log's text
// without the sentinel's prefix ("Too many iterations").
func scramMessage(err error) *string {
	if err == nil {
		return nil
	}
	m := err.Error()
	for _, sentinel := range []error{log.ErrUnsupportedSASLMechanism, log.ErrUnacceptableCredential, log.ErrResourceNotFound, log.ErrDuplicateResource} {
		if rest, ok := strings.CutPrefix(m, sentinel.Error()+": "); ok {
			return &rest
		}
	}
	return &m
}

// handleDescribeUserSCRAMCredentials lists the directory's SCRAM
// credentials (log.Dir.DescribeUserScramCredentials): the mechanisms and
// iteration counts, never the keys. The users of Config.Users, which
// PLAIN and SCRAM accept too, are not the directory's and are not listed.
func (s *Server) handleDescribeUserSCRAMCredentials(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	users := make([]string, len(req.Users))
	for i, u := range req.Users {
		users[i] = u.Name
	}
	for _, d := range s.dir.DescribeUserScramCredentials(users) {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode, r.ErrorMessage = d.User, scramCode(d.Err), scramMessage(d.Err)
		for _, m := range []log.ScramMechanism{log.ScramSHA256, log.ScramSHA512} {
			if its, ok := d.Iterations[m]; ok {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = int8(m), its
				r.CredentialInfos = append(r.CredentialInfos, ci)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// handleAlterUserSCRAMCredentials deletes and upserts SCRAM credentials
// in the directory (log.Dir.AlterUserScramCredentials), which SASL/SCRAM
// authenticates with from then on.
func (s *Server) handleAlterUserSCRAMCredentials(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	dels := make([]log.ScramDeletion, len(req.Deletions))
	for i, d := range req.Deletions {
		dels[i] = log.ScramDeletion{User: d.Name, Mechanism: log.ScramMechanism(d.Mechanism)}
	}
	ups := make([]log.ScramUpsertion, len(req.Upsertions))
	for i, u := range req.Upsertions {
		ups[i] = log.ScramUpsertion{User: u.Name, Mechanism: log.ScramMechanism(u.Mechanism), Iterations: u.Iterations,
			Salt: u.Salt, SaltedPassword: u.SaltedPassword}
	}
	results, err := s.dir.AlterUserScramCredentials(ctx, dels, ups)
	if err != nil {
		// Nothing was changed: every user named gets the error.
		seen := map[string]bool{}
		add := func(user string) {
			if !seen[user] {
				seen[user] = true
				results = append(results, log.UserScramResult{User: user, Err: err})
			}
		}
		for _, d := range dels {
			add(d.User)
		}
		for _, u := range ups {
			add(u.User)
		}
	}
	for _, r := range results {
		rr := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		rr.User, rr.ErrorCode, rr.ErrorMessage = r.User, scramCode(r.Err), scramMessage(r.Err)
		resp.Results = append(resp.Results, rr)
	}
	return resp, nil
}
