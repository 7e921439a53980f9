package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/internal/faulttest"
)

// With wait_replicas=1 a state change is answered only once the replica has it. With the replica
// frozen (SIGSTOP: connected, silent), a put, a reserve and a delete answer INTERNAL_ERROR once
// wait_timeout has passed, though the master applied them (the session holds the job it was not
// told of, and may delete it); a gateway without the option is answered as before. Thawed, the replica catches up and changes
// are acknowledged again.
func TestWaitReplicas(t *testing.T) {
	pair := faulttest.StartRedisPair(t, waitPairPorts)
	const waitTimeout = 300 * time.Millisecond
	open := func(query string) (*beanredis.Backend, *wireConn) {
		opts, err := beanredis.ParseURL(pair.PlainURL("127.0.0.1", "prefix=w&"+query))
		require.NoError(t, err)
		b, err := beanredis.New(context.Background(), opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b, dialWire(t, startGateway(t, b))
	}
	wb, waiting := open("wait_replicas=1&wait_timeout=" + waitTimeout.String())
	_, plain := open("lease=5s")
	replica := pair.Client(pair.Ports[1])
	t.Cleanup(func() { _ = replica.Close() })

	line, _ := waiting.do("put 0 0 60 1\r\na")
	require.Equal(t, "INSERTED 1", line)
	n, err := replica.Exists(context.Background(), "{w}:j:00000000000000000001").Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the replica has the job once its put is answered")

	pair.Freeze(pair.Ports[1])
	t.Cleanup(func() { pair.Thaw(pair.Ports[1]) })
	start := time.Now()
	line, _ = waiting.do("put 0 0 60 1\r\nb")
	require.Equal(t, "INTERNAL_ERROR", line)
	require.GreaterOrEqual(t, time.Since(start), waitTimeout)
	line, _ = plain.do("put 0 0 60 1\r\nc")
	require.Equal(t, "INSERTED 3", line, "without wait_replicas nothing waits")
	line, body := waiting.do("peek 2")
	require.Equal(t, "FOUND 2 1", line, "the put answered INTERNAL_ERROR was applied on the master")
	require.Equal(t, "b", body)
	line, _ = waiting.do("reserve-with-timeout 0")
	require.Equal(t, "INTERNAL_ERROR", line, "a reserve waits for the replica too")
	line, _ = waiting.do("delete 1")
	require.Equal(t, "INTERNAL_ERROR", line)
	_, err = wb.Put(context.Background(), backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("d")})
	require.EqualError(t, err, "redis: put: not replicated: 0 of 1 replicas acknowledged within 300ms (the change is applied on the master and may be lost in a failover)")
	require.NoError(t, wb.Ping(context.Background()), "a replica's silence is not an outage of the master")

	pair.Thaw(pair.Ports[1])
	line, _ = waiting.do("put 0 0 60 1\r\ne")
	require.Equal(t, "INSERTED 5", line)
	line, _ = waiting.do("delete 1")
	require.Equal(t, "NOT_FOUND", line, "the delete answered INTERNAL_ERROR was applied too")
	line, _ = waiting.do("delete 2")
	require.Equal(t, "DELETED", line)
	n, err = replica.Exists(context.Background(), "{w}:j:00000000000000000002", "{w}:j:00000000000000000005").Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the replica has the put and the delete once they are answered")
}
