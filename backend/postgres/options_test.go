package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		url     string
		want    Options
		wantErr bool
	}{
		{name: "PlainURLKeepsDefaults", url: "postgres://u@h:5432/db?sslmode=disable",
			want: Options{DSN: "postgres://u@h:5432/db?sslmode=disable"}},
		{name: "OwnParametersAreTakenOut", url: "postgresql://u@h/db?schema=q&command_timeout=2s&lease_ttl=3s&vacuum_interval=-1s&migrate=false&sslmode=disable",
			want: Options{DSN: "postgresql://u@h/db?sslmode=disable", Schema: "q", CommandTimeout: 2 * time.Second,
				LeaseTTL: 3 * time.Second, VacuumInterval: -time.Second, SkipMigrate: true}},
		{name: "OtherSchemeIsRejected", url: "redis://h/0", wantErr: true},
		{name: "BadDurationIsRejected", url: "postgres://h/db?lease_ttl=soon", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseURL(c.url)
			if c.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}
