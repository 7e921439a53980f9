package redis

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientLogIsAWarningOfTheGivenLogger(t *testing.T) {
	var buf bytes.Buffer
	l := clientLog{log: slog.New(slog.NewTextHandler(&buf, nil))}
	l.Printf(context.Background(), "redis: %s failed: %v", "dial", "connection refused")
	require.Contains(t, buf.String(), "level=WARN")
	require.Contains(t, buf.String(), `msg="redis: dial failed: connection refused" from=go-redis`)
}
