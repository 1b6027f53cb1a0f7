// Package logging gives kafkalite's components their default logger: the
// program's slog.Default() at level Warn and above, so that what a Kafka
// client or broker would warn about (a member dropped from its group, a
// damaged index rebuilt, a checkpoint ignored) reaches the program's log
// without an explicit Logger, while routine Info and Debug lines stay
// quiet. A component given a Logger uses it as it is.
package logging

import (
	"context"
	"log/slog"
)

// OrDefault returns l, or when l is nil a logger that writes records of
// level Warn and above to whatever slog.Default() is at the time of each
// record.
func OrDefault(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.New(warnings{})
}

// warnings forwards records of level Warn and above to slog.Default()'s
// handler, looked up at each call so that a later slog.SetDefault applies.
type warnings struct {
	attrs []slog.Attr
	group string
}

func (w warnings) inner() slog.Handler {
	h := slog.Default().Handler()
	if w.group != "" {
		h = h.WithGroup(w.group)
	}
	if len(w.attrs) > 0 {
		h = h.WithAttrs(w.attrs)
	}
	return h
}

func (w warnings) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && slog.Default().Handler().Enabled(ctx, level)
}

func (w warnings) Handle(ctx context.Context, r slog.Record) error {
	return w.inner().Handle(ctx, r)
}

func (w warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnings{attrs: append(w.attrs[:len(w.attrs):len(w.attrs)], attrs...), group: w.group}
}

func (w warnings) WithGroup(name string) slog.Handler {
	if w.group != "" || len(w.attrs) > 0 {
		// Groups nest over the attributes before them; resolve eagerly
		// against the current default rather than model the nesting.
		return w.inner().WithGroup(name)
	}
	return warnings{group: name}
}
