package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/configs"
)

// The console's header names the store and its namespace, never a credential.
func TestConsoleStoreInfo(t *testing.T) {
	tests := []struct {
		name, url, binlog     string
		wantNamespace, wantAt string
	}{
		{"RedisDefaultPrefix", "redis://:pw@cache:6379/0", "", "prefix beangate", "redis://cache:6379/0"},
		{"RedisPrefix", "rediss://u:pw@cache:6380/2?prefix=jobs", "", "prefix jobs", "rediss://cache:6380/2"},
		{"PostgresSchema", "postgres://u:pw@db/queue?schema=q&password=pw2", "", "schema q", "postgres://db/queue"},
		{"PostgresDefaultSchema", "postgresql://db/queue", "", "schema beangate", "postgresql://db/queue"},
		{"MemoryBinlog", "memory://", "/var/lib/beangate", "binlog /var/lib/beangate", ""},
		{"MemoryNoBinlog", "memory://", "", "no binlog", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := configs.Config{Backend: tt.url}
			cfg.Binlog.Dir = tt.binlog
			require.Equal(t, tt.wantNamespace, storeNamespace(cfg))
			require.Equal(t, tt.wantAt, storeAddress(tt.url))
			require.NotContains(t, storeAddress(tt.url), "pw")
		})
	}
}
