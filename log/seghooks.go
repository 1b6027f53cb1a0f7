package log

import (
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/segment"
)

// segHooks are what the log does to its segments beyond their public
// methods (segment.LogHooks): publishing appends, the overlapped append,
// the marks of point reads, the bounds and damage of sealed segments, and
// the checks and rebuilds of .txnindex files.
var segHooks = segment.Hooks(access.Internal{})
