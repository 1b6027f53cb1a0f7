package server

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// feature is one KIP-584 feature the server reports: the levels it can
// run at and the one it runs at (finalized).
type feature struct {
	name               string
	minLevel, maxLevel int16
	finalized          int16
}

// features are the features the server reports, at the levels kafkalite
// implements (Kafka 4.4's levels for reference: transaction.version 0–2,
// group.version 0–1, share.version 0–2):
//   - transaction.version 0: the coordinator speaks transactions v1 only
//     (a client that saw 2 finalized would use KIP-890's v2 protocol).
//   - group.version 1: KIP-848's consumer group protocol is served.
//   - share.version 1: KIP-932's share groups are served (level 2 adds
//     their dead-letter queue, which kafkalite does not have).
//
// A feature runs at its one level: the server cannot turn the protocols
// off, so it offers no other level. Kafka lists, as here, a supported
// feature only when its highest level is above 0 and a finalized one only
// above level 0.
var features = []feature{
	{name: "group.version", minLevel: 1, maxLevel: 1, finalized: 1},
	{name: "share.version", minLevel: 1, maxLevel: 1, finalized: 1},
	{name: "transaction.version", minLevel: 0, maxLevel: 0, finalized: 0},
}

// featuresEpoch is the epoch of the finalized features: they never
// change while the server runs.
const featuresEpoch = 0

// addFeatures adds the supported and finalized features to an ApiVersions
// response (v3+ carries them).
func addFeatures(resp *kmsg.ApiVersionsResponse) {
	resp.FinalizedFeaturesEpoch = featuresEpoch
	for _, f := range features {
		if f.maxLevel > 0 {
			sf := kmsg.NewApiVersionsResponseSupportedFeature()
			sf.Name, sf.MinVersion, sf.MaxVersion = f.name, f.minLevel, f.maxLevel
			resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		}
		if f.finalized > 0 {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.name, f.finalized, f.finalized
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
	}
}

// UpdateFeatures' upgrade types (v1+; v0 says AllowDowngrade).
const (
	upgradeUpgrade         = 1
	upgradeSafeDowngrade   = 2
	upgradeUnsafeDowngrade = 3
)

// handleUpdateFeatures answers as Kafka 4.4's controller does: an update
// to the level a feature runs at succeeds (nothing changes); any other
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
	var f *feature
	for i := range features {
		if features[i].name == u.Feature {
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
	case u.MaxVersionLevel == f.finalized:
		return errNone, ""
	case u.MaxVersionLevel < f.finalized && !downgrade:
		return errInvalidUpdateVersion, fmt.Sprintf("cannot downgrade %s from %d to %d without a downgrade upgrade type", f.name, f.finalized, u.MaxVersionLevel)
	default:
		return errInvalidUpdateVersion, fmt.Sprintf("%s %d is not supported: kafkalite runs %s at %d only", f.name, u.MaxVersionLevel, f.name, f.finalized)
	}
}
