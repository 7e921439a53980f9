package migrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// BenchmarkMover measures the mover (docs/migration.md): b.N jobs (100-byte bodies, 10 tubes)
// moved from a binlog directory into Redis and into PostgreSQL, and from a running beanstalkd
// into Redis. An op is one job moved; jobs/s is the same figure the other way up. For a fixed
// count: -benchtime 1000000x.
func BenchmarkMover(b *testing.B) {
	b.Run("binlog-to-redis", func(b *testing.B) { benchmarkBinlogMove(b, redisStore(b)) })
	b.Run("binlog-to-postgres", func(b *testing.B) { benchmarkBinlogMove(b, postgresStore(b)) })
	b.Run("beanstalkd-to-redis", func(b *testing.B) {
		addr := gatewaytest.StartBeanstalkd(b, gatewaytest.DebianBeanstalkd(b), 0)
		fillBeanstalkd(b, addr, b.N)
		benchmarkMove(b, "beanstalk://"+addr, redisStore(b), 1000)
	})
}

func benchmarkBinlogMove(b *testing.B, st store) {
	dir := b.TempDir()
	writeBinlog(b, dir, b.N)
	benchmarkMove(b, "binlog:"+dir, st, 5000)
}

// benchmarkMove times one run of the mover from source into st, which must move b.N jobs.
func benchmarkMove(b *testing.B, source string, st store, batch int) {
	ctx := context.Background()
	src, err := OpenSource(ctx, source, "", false, nil)
	require.NoError(b, err)
	defer src.Close()
	dst := st.dest(b)
	defer dst.Close()
	b.ResetTimer()
	rep, err := Run(ctx, src, dst, Options{Batch: batch})
	b.StopTimer()
	require.NoError(b, err)
	require.Equal(b, uint64(b.N), rep.Moved)
	b.ReportMetric(float64(b.N)/rep.Elapsed.Seconds(), "jobs/s")
}

// fillBeanstalkd puts n jobs into the server at addr, as writeBinlog writes them: pipelined, a
// thousand a round trip.
func fillBeanstalkd(b *testing.B, addr string, n int) {
	c := testConn(b, addr)
	body := make([]byte, 100)
	for start := 0; start < n; start += 1000 {
		end := min(start+1000, n)
		for i := start; i < end; i++ {
			if i%10 == 0 {
				c.Sendf("use tube%d", i%100/10)
			}
			c.SendPut(0, 0, 60, body)
		}
		require.NoError(b, c.Flush())
		for i := start; i < end; i++ {
			if i%10 == 0 {
				require.NoError(b, c.Expect("USING"))
			}
			_, err := c.ReadUint("INSERTED")
			require.NoError(b, err)
		}
	}
}

// writeBinlog writes n ready jobs as beanstalkd would (10 MiB files, version 7).
func writeBinlog(t testing.TB, dir string, n int) {
	body := make([]byte, 100)
	now := time.Now().UnixNano()
	file, buf := 1, binary.LittleEndian.AppendUint32(nil, binlog.Version7)
	flush := func() {
		require.NoError(t, os.WriteFile(filepath.Join(dir, binlog.FileName(uint64(file))), buf, 0o600))
		file++
		buf = binary.LittleEndian.AppendUint32(buf[:0], binlog.Version7)
	}
	for i := 1; i <= n; i++ {
		r := binlog.Record{ID: uint64(i), Tube: fmt.Sprintf("tube%d", i%10), Priority: uint32(i % 1000), TTR: 60e9,
			CreatedAt: now, State: binlog.Ready, Body: body}
		buf = binlog.AppendFull(buf, &r)
		if len(buf) > binlog.DefaultMaxFileSize-300 {
			flush()
		}
	}
	flush()
}
