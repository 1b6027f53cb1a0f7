package log

import (
	"log/slog"
	"time"

	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/log/vfs"
)

func (c *Config) fs() vfs.FS {
	if c.FS != nil {
		return c.FS
	}
	return vfs.Default
}

func (c *Config) logger() *slog.Logger {
	return logging.OrDefault(c.Logger)
}

func (c *Config) clock() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	return time.Now
}
