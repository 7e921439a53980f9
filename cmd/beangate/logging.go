package main

import (
	"io"
	"log/slog"

	"github.com/beangate/beangate/configs"
)

// newLogger logs to w in cfg's format. Each -V lowers the level one step below cfg.Log.Level's:
// -V reaches debug, where the gateway logs every command; -VV goes below it for anything
// chattier.
func newLogger(cfg configs.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level)) // validated by configs
	switch {
	case cfg.Verbose >= 2:
		level = min(level, slog.LevelDebug-4)
	case cfg.Verbose == 1:
		level = min(level, slog.LevelDebug)
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
