package migrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestSpeed measures the mover (docs/migration.md): MIGRATE_SPEED=N moves a binlog directory of
// N jobs (100-byte bodies, 10 tubes) into Redis and into PostgreSQL, and N/10 jobs from a running
// beanstalkd into Redis. Not run by default: it is a measurement, not a check.
func TestSpeed(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MIGRATE_SPEED"))
	if n == 0 {
		t.Skip("set MIGRATE_SPEED=N to measure (docs/migration.md)")
	}
	dir := t.TempDir()
	writeBinlog(t, dir, n)
	for _, st := range []store{redisStore(t), postgresStore(t)} {
		ctx := context.Background()
		src, err := OpenSource(ctx, "binlog:"+dir, "", false, nil)
		require.NoError(t, err)
		dst := st.dest(t)
		rep, err := Run(ctx, src, dst, Options{Batch: 5000})
		require.NoError(t, err)
		require.Equal(t, uint64(n), rep.Moved)
		t.Logf("binlog of %d jobs -> %s: %v, %.0f jobs/s", n, st.name, rep.Elapsed.Round(time.Millisecond), float64(n)/rep.Elapsed.Seconds())
		_ = dst.Close()
		_ = src.Close()
	}

	m := n / 10
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	c := testConn(t, addr)
	body := make([]byte, 100)
	for i := range m {
		if i%10 == 0 {
			c.send("use tube%d", i%100/10)
		}
		c.sendBody(fmt.Sprintf("put 0 0 60 %d", len(body)), body)
		if i%1000 == 999 || i == m-1 {
			require.NoError(t, c.flush())
		}
	}
	for i := range m {
		if i%10 == 0 {
			_, _, err := c.reply("USING")
			require.NoError(t, err)
		}
		_, _, err := c.reply("INSERTED")
		require.NoError(t, err)
	}
	st := redisStore(t)
	ctx := context.Background()
	src, err := OpenSource(ctx, "beanstalk://"+addr, "", false, nil)
	require.NoError(t, err)
	dst := st.dest(t)
	rep, err := Run(ctx, src, dst, Options{Batch: 1000})
	require.NoError(t, err)
	require.Equal(t, uint64(m), rep.Moved)
	t.Logf("running beanstalkd with %d jobs -> redis: %v, %.0f jobs/s", m, rep.Elapsed.Round(time.Millisecond), float64(m)/rep.Elapsed.Seconds())
}

// writeBinlog writes n ready jobs as beanstalkd would (10 MiB files, version 7).
func writeBinlog(t *testing.T, dir string, n int) {
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
