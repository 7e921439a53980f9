package storeprobe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRedisInfo(t *testing.T) {
	const info = "# CPU\r\nused_cpu_sys:25.500000\r\nused_cpu_user:76.250000\r\n" +
		"used_cpu_sys_children:1.000000\r\nused_cpu_sys_main_thread:20.5\r\nused_cpu_user_main_thread:75.25\r\n\r\n# Commandstats\r\n" +
		"cmdstat_fcall:calls=100,usec=5000,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_fcall_ro:calls=5,usec=50,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hset:calls=300,usec=300,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
	const cpu = "used_cpu_sys:1\r\nused_cpu_user:2\r\nused_cpu_sys_main_thread:1\r\nused_cpu_user_main_thread:1\r\n"
	tests := []struct {
		name    string
		text    string
		want    redisNode
		wantErr bool
	}{
		{"cpu and commands", info, redisNode{cpu: 101750 * time.Millisecond, mainThread: 95750 * time.Millisecond, commands: 405, fcalls: 105}, false},
		{"no commandstats", cpu, redisNode{}, true},
		{"no cpu", "cmdstat_get:calls=1,usec=1\r\n", redisNode{}, true},
		{"no main thread", "used_cpu_sys:1\r\nused_cpu_user:2\r\ncmdstat_get:calls=1,usec=1\r\n", redisNode{}, true},
		{"bad main thread", "used_cpu_sys:1\r\nused_cpu_user:2\r\nused_cpu_sys_main_thread:x\r\ncmdstat_get:calls=1,usec=1\r\n", redisNode{}, true},
		{"bad calls", cpu + "cmdstat_get:calls=x,usec=1\r\n", redisNode{}, true},
		{"no calls", cpu + "cmdstat_get:usec=1\r\n", redisNode{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRedisInfo(tt.text)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
