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
			in:   "redis://h1:7000?cluster=true&layout=spread&shards=3&prefix=q",
			want: Options{URL: "redis://h1:7000", Cluster: true, Prefix: "q", Layout: LayoutSpread, Shards: 3},
		},
		{in: "redis://h1:7000?cluster=true&layout=spread", want: Options{URL: "redis://h1:7000", Cluster: true, Layout: LayoutSpread}},
		{in: "redis://h:1/0?layout=spread", wantErr: true},                          // one server: one slot
		{in: "redis://s1:26379/0?master_name=main&layout=spread", wantErr: true},    // Sentinel: one server
		{in: "redis://h1:7000?cluster=true&shards=2", wantErr: true},                // shards without spread
		{in: "redis://h1:7000?cluster=true&layout=spread&shards=0", wantErr: true},  // not 1 or more
		{in: "redis://h1:7000?cluster=true&layout=spread&shards=65", wantErr: true}, // over maxShards
		{in: "redis://h1:7000?cluster=true&layout=scattered", wantErr: true},        // no such layout
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
		{
			in:   "redis://h:1/0?wait_replicas=1&wait_timeout=250ms&prefix=q",
			want: Options{URL: "redis://h:1/0", Prefix: "q", WaitReplicas: 1, WaitTimeout: 250 * time.Millisecond},
		},
		{in: "redis://h:1/0?wait_replicas=2", want: Options{URL: "redis://h:1/0", WaitReplicas: 2}}, // New's default timeout
		{in: "redis://h:1/0?wait_replicas=0", want: Options{URL: "redis://h:1/0"}},                  // off
		{
			in:   "redis://s1:26379/0?master_name=main&wait_replicas=1&wait_timeout=1s",
			want: Options{URL: "redis://s1:26379/0?master_name=main", Sentinel: true, WaitReplicas: 1, WaitTimeout: time.Second},
		},
		{
			in:   "redis://h1:7000?cluster=true&wait_replicas=1&wait_timeout=100ms",
			want: Options{URL: "redis://h1:7000", Cluster: true, WaitReplicas: 1, WaitTimeout: 100 * time.Millisecond},
		},
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

// Bad wait_replicas and wait_timeout values are refused, each with an error naming what is
// wrong.
func TestParseURLWaitErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ query, want string }{
		{"wait_replicas=-1", `redis: URL: wait_replicas="-1" is not a whole number of replicas (0 or more)`},
		{"wait_replicas=one", `redis: URL: wait_replicas="one" is not a whole number of replicas (0 or more)`},
		{"wait_replicas=1.5", `redis: URL: wait_replicas="1.5" is not a whole number of replicas (0 or more)`},
		{"wait_replicas=1&wait_timeout=soon", `redis: URL: wait_timeout="soon" is not a positive duration`},
		{"wait_replicas=1&wait_timeout=0s", `redis: URL: wait_timeout="0s" is not a positive duration`},
		{"wait_replicas=1&wait_timeout=-1s", `redis: URL: wait_timeout="-1s" is not a positive duration`},
		{"wait_replicas=1&wait_timeout=500us", "redis: options: wait_timeout 500µs is under 1ms (WAIT counts whole milliseconds)"},
		{"wait_timeout=1s", "redis: options: wait_timeout needs wait_replicas"},
		{"wait_replicas=0&wait_timeout=1s", "redis: options: wait_timeout needs wait_replicas"},
		{"wait_replicas=1&wait_timeout=5s", "redis: options: wait_timeout 5s is not shorter than the command timeout 5s"},
		{"wait_replicas=1&timeout=500ms", "redis: options: wait_timeout 1s is not shorter than the command timeout 500ms"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			_, err := ParseURL("redis://h:1/0?" + tt.query)
			require.EqualError(t, err, tt.want)
		})
	}
}

// Options given directly, not by URL, are checked and completed by New the same way.
func TestWaitOptionsDefaults(t *testing.T) {
	t.Parallel()
	o, err := Options{URL: "redis://h:1/0", WaitReplicas: 1}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultWaitTimeout, o.WaitTimeout)
	_, err = Options{URL: "redis://h:1/0", WaitReplicas: -2}.withDefaults()
	require.EqualError(t, err, "redis: options: wait_replicas -2 is negative")
}
