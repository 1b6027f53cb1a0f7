package log

import (
	"io"
	"log/slog"
	"time"

	"github.com/kafkalite/kafkalite/internal/vfs"
)

func (c *Config) fs() vfs.FS {
	if c.FS != nil {
		return c.FS
	}
	return vfs.Default
}

func (c *Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (c *Config) clock() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	return time.Now
}
