package main

import (
	"io"
	"log/slog"
	"strings"

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
	opts.ReplaceAttr = oneLineAttr
	return slog.New(slog.NewTextHandler(w, opts))
}

// oneLineAttr puts a multi-line string or error (pgx lists each connection attempt on a line
// of its own) on one line, which the text handler would otherwise show with \n and \t escapes.
func oneLineAttr(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value.Any().(type) {
	case string:
		s = v
	case error:
		s = v.Error()
	default:
		return a
	}
	if strings.ContainsAny(s, "\r\n") {
		a.Value = slog.StringValue(oneLine(s))
	}
	return a
}

// oneLine joins s's lines with "; " (a space after a colon), each trimmed.
func oneLine(s string) string {
	var b strings.Builder
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		switch {
		case b.Len() == 0:
		case strings.HasSuffix(b.String(), ":"):
			b.WriteByte(' ')
		default:
			b.WriteString("; ")
		}
		b.WriteString(line)
	}
	return b.String()
}
