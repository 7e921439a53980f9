package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/configs"
)

func TestNewLoggerLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		level      string
		verbose    int
		enabled    slog.Level
		notEnabled slog.Level
	}{
		{"InfoByDefault", "info", 0, slog.LevelInfo, slog.LevelDebug},
		{"OneVReachesDebug", "info", 1, slog.LevelDebug, slog.LevelDebug - 1},
		{"TwoVGoBelowDebug", "info", 2, slog.LevelDebug - 4, slog.LevelDebug - 5},
		{"VerboseNeverRaisesTheLevel", "debug", 0, slog.LevelDebug, slog.LevelDebug - 1},
		{"ErrorLevel", "error", 0, slog.LevelError, slog.LevelWarn},
		{"OneVOverridesErrorLevel", "error", 1, slog.LevelDebug, slog.LevelDebug - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := configs.Defaults()
			cfg.Log.Level, cfg.Verbose = tt.level, tt.verbose
			log := newLogger(cfg, &bytes.Buffer{})
			require.True(t, log.Enabled(context.Background(), tt.enabled))
			require.False(t, log.Enabled(context.Background(), tt.notEnabled))
		})
	}
}

func TestNewLoggerJSON(t *testing.T) {
	t.Parallel()
	cfg := configs.Defaults()
	cfg.Log.Format = "json"
	var out bytes.Buffer
	newLogger(cfg, &out).Info("listening", "addr", "127.0.0.1:11300")
	var line map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &line))
	require.Equal(t, "listening", line["msg"])
	require.Equal(t, "127.0.0.1:11300", line["addr"])
}

// A multi-line error or string reads on one line in the text log, not with \n and \t escapes;
// the JSON log keeps it as it is.
func TestTextLogPutsLinesOnOne(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, format string
		value        any
		want         string
	}{
		{"Error", "text", errors.New("failed to connect to `user=u database=d`:\n\tA: tls error\n\tA: server error"),
			"err=\"failed to connect to `user=u database=d`: A: tls error; A: server error\"\n"},
		{"String", "text", "first\r\nsecond\n", "err=\"first; second\"\n"},
		{"OneLineUntouched", "text", errors.New("a: b"), "err=\"a: b\"\n"},
		{"JSONKeepsLines", "json", errors.New("a:\n\tb"), `"err":"a:\n\tb"}` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := configs.Defaults()
			cfg.Log.Format = tt.format
			var out bytes.Buffer
			newLogger(cfg, &out).Error("cannot open backend", "err", tt.value)
			require.True(t, strings.HasSuffix(out.String(), tt.want), out.String())
			require.Equal(t, 1, strings.Count(out.String(), "\n"))
		})
	}
}
