package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Options
		wantErr bool
	}{
		{in: "redis://127.0.0.1:6379/0", want: Options{URL: "redis://127.0.0.1:6379/0"}},
		{
			in:   "redis://h:1/2?prefix=q1&timeout=2s&lease=3s",
			want: Options{URL: "redis://h:1/2", Prefix: "q1", CommandTimeout: 2 * time.Second, LeaseTTL: 3 * time.Second},
		},
		{in: "redis://h:1/0?prefix=a&dial_timeout=1s", want: Options{URL: "redis://h:1/0?dial_timeout=1s", Prefix: "a"}},
		{
			in:   "redis://h1:7000?cluster=true&addr=h2:7001&addr=h3:7002&prefix=q",
			want: Options{URL: "redis://h1:7000?addr=h2%3A7001&addr=h3%3A7002", Cluster: true, Prefix: "q"},
		},
		{in: "rediss://u:p@h1:7000/0?cluster=1", want: Options{URL: "rediss://u:p@h1:7000/0", Cluster: true}},
		{in: "redis://h1:7000/?cluster=true", want: Options{URL: "redis://h1:7000/", Cluster: true}},
		{in: "redis://h:1/2?cluster=false", want: Options{URL: "redis://h:1/2"}},
		{in: "redis://h1:7000/1?cluster=true", wantErr: true},     // a cluster has only DB 0
		{in: "redis://h1:7000?cluster=yes-please", wantErr: true}, // not a boolean
		{in: "redis://h1:7000?cluster=true&addr=h2", wantErr: true},
		{in: "redis://h1:7000?cluster=true&bogus=1", wantErr: true},
		{in: "redis://h1:7000/0?addr=h2:7001", wantErr: true}, // more nodes without cluster=true
		{
			in:   "redis://s1:26379/0?master_name=main&addr=s2:26379&prefix=q&lease=2s",
			want: Options{URL: "redis://s1:26379/0?addr=s2%3A26379&master_name=main", Sentinel: true, Prefix: "q", LeaseTTL: 2 * time.Second},
		},
		{
			in:   "rediss://su:sp@s1:26379/2?master_name=main&username=u&password=p",
			want: Options{URL: "rediss://su:sp@s1:26379/2?master_name=main&password=p&username=u", Sentinel: true},
		},
		{
			in:   "redis://s1:26379/0?master_name=main&sentinel_username=su&sentinel_password=sp",
			want: Options{URL: "redis://su:sp@s1:26379/0?master_name=main", Sentinel: true},
		},
		{in: "redis://x:y@s1:26379/0?master_name=main&sentinel_password=sp", wantErr: true},
		{in: "redis://s1:26379/0?sentinel_password=sp", wantErr: true},
		{in: "redis://s1:26379/0?master_name=main&cluster=true", wantErr: true},
		{in: "redis://s1:26379/0?master_name=main&addr=s2", wantErr: true},
		{in: "redis://s1:26379/0?master_name=main&bogus=1", wantErr: true},
		{in: "postgres://h/db", wantErr: true},
		{in: "redis://h:1/0?timeout=soon", wantErr: true},
		{in: "redis://h:1/0?timeout=-1s", wantErr: true},
		{in: "redis://h:1/0?prefix=a{b}", wantErr: true},
		{in: "redis://h:1/0?bogus=1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseURL(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
