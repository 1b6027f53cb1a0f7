package server

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Feature is a feature flag the server reports, as Kafka's brokers report
// them in ApiVersions (v3+) and DescribeFeatures: the range of levels the
// server supports and the level finalized for the cluster, which clients
// act on (a Kafka 4 producer uses transactions version 2 once
// transaction.version is finalized at 2 or more).
type Feature struct {
	// Name is the feature's name, e.g. "transaction.version".
	Name string
	// MinVersion and MaxVersion are the supported range.
	MinVersion, MaxVersion int16
	// Finalized is the finalized level; 0 (the feature off) is not
	// reported as finalized, as Kafka does not report it.
	Finalized int16
}

// FinalizedFeaturesEpoch is the epoch of the finalized features reported
// (Kafka's metadata offset of their last change): the levels never change
// while the server runs.
const FinalizedFeaturesEpoch int64 = 1

// features are the features served, at Kafka 4.4's ranges and the levels a
// freshly formatted Kafka 4.4 cluster finalizes (each feature's
// LATEST_PRODUCTION): transaction.version 2 (KIP-890's transactions
// version 2, served by the transaction coordinator), group.version 1
// (KIP-848's consumer groups), share.version 1 (KIP-932's share groups;
// Kafka 4.4 finalizes 2, whose level adds the share groups' dead-letter
// queue, which kafkalite does not have). Features of protocols
// the server lacks (streams.version) are not reported; metadata.version,
// kraft.version and eligible.leader.replicas.version, which no client
// protocol turns on, are not reported either.
var features = []Feature{
	{Name: "group.version", MinVersion: 0, MaxVersion: 1, Finalized: 1},
	{Name: "share.version", MinVersion: 0, MaxVersion: 1, Finalized: 1},
	{Name: "transaction.version", MinVersion: 0, MaxVersion: 2, Finalized: 2},
}

// Features lists the features the server reports, ordered by name.
func Features() []Feature { return slices.Clone(features) }

// setFeatures fills an ApiVersions response of version v with the
// features. Version 3 omits supported features whose range starts at 0,
// as Kafka does (version 4 fixed KAFKA-17011, which made clients refuse a
// minimum of 0).
func setFeatures(resp *kmsg.ApiVersionsResponse, v int16) {
	if v < 3 {
		return
	}
	for _, f := range features {
		if v >= 4 || f.MinVersion > 0 {
			sf := kmsg.NewApiVersionsResponseSupportedFeature()
			sf.Name, sf.MinVersion, sf.MaxVersion = f.Name, f.MinVersion, f.MaxVersion
			resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		}
		if f.Finalized > 0 {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.Name, f.Finalized, f.Finalized
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
	}
	resp.FinalizedFeaturesEpoch = FinalizedFeaturesEpoch
}

// UpdateFeatures' upgrade types (v1+; v0 says AllowDowngrade).
const (
	upgradeUpgrade         = 1
	upgradeSafeDowngrade   = 2
	upgradeUnsafeDowngrade = 3
)

// handleUpdateFeatures answers as Kafka 4.4's controller does: an update
// to the level a feature runs at succeeds (nothing changes: the server
// runs each feature at one level, which it cannot turn off); any other
// level, an unknown feature, a downgrade not asked as one or a feature
// named twice fails the whole request (INVALID_UPDATE_VERSION, or
// INVALID_REQUEST for the last), its error at the top level and, before
// v2, a result per feature.
func (s *Server) handleUpdateFeatures(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	code, msg := errNone, ""
	seen := map[string]bool{}
	for _, u := range req.FeatureUpdates {
		if code != errNone {
			break
		}
		if seen[u.Feature] {
			code, msg = errInvalidRequest, fmt.Sprintf("feature %s is named more than once", u.Feature)
			break
		}
		seen[u.Feature] = true
		code, msg = checkFeatureUpdate(req.Version, u)
	}
	resp.ErrorCode = code
	if code != errNone {
		resp.ErrorMessage = &msg
	}
	if req.Version < 2 {
		for _, u := range req.FeatureUpdates {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature = u.Feature
			resp.Results = append(resp.Results, r)
		}
	}
	return resp, nil
}

func checkFeatureUpdate(version int16, u kmsg.UpdateFeaturesRequestFeatureUpdate) (int16, string) {
	var f *Feature
	for i := range features {
		if features[i].Name == u.Feature {
			f = &features[i]
		}
	}
	if f == nil {
		return errInvalidUpdateVersion, fmt.Sprintf("feature %s is not supported by this server", u.Feature)
	}
	downgrade := u.AllowDowngrade
	if version >= 1 {
		if u.UpgradeType < upgradeUpgrade || u.UpgradeType > upgradeUnsafeDowngrade {
			return errInvalidUpdateVersion, fmt.Sprintf("unknown upgrade type %d", u.UpgradeType)
		}
		downgrade = u.UpgradeType != upgradeUpgrade
	}
	switch {
	case u.MaxVersionLevel == f.Finalized:
		return errNone, ""
	case u.MaxVersionLevel < f.Finalized && !downgrade:
		return errInvalidUpdateVersion, fmt.Sprintf("cannot downgrade %s from %d to %d without a downgrade upgrade type", f.Name, f.Finalized, u.MaxVersionLevel)
	default:
		return errInvalidUpdateVersion, fmt.Sprintf("%s %d is not supported: kafkalite runs %s at %d only", f.Name, u.MaxVersionLevel, f.Name, f.Finalized)
	}
}
