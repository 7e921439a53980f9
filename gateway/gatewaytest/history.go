package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	beanstalk "github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/cmd/beangate/ctl"
	"github.com/beangate/beangate/gateway/console"
)

// dialFrom is dial, also returning the connection's own address: the one its gateway sees and
// a job's history names.
func (f *policyFleet) dialFrom(i int) (*beanstalk.Conn, *beanstalk.TubeSet, string) {
	f.t.Helper()
	nc, err := net.Dial("tcp", f.addrs[i])
	require.NoError(f.t, err)
	c := beanstalk.NewConn(nc)
	f.t.Cleanup(func() { _ = c.Close() })
	c.Tube.Name = f.tube
	return c, beanstalk.NewTubeSet(c, f.tube), nc.LocalAddr().String()
}

// A job whose first worker lets its TTR run out and whose second, on the other gateway, buries
// it: the console's API and `beangate ctl job` (through the second gateway's API) tell that
// story, naming each holder by its address.
func historyNamesEachHolder(t *testing.T, f *policyFleet) {
	f.govern(backend.Policy{History: true})
	producer, _, producerAddr := f.dialFrom(0)
	id, err := producer.Put([]byte("flaky"), 0, 0, time.Second)
	require.NoError(t, err)
	_, first, firstAddr := f.dialFrom(0)
	got, _, err := first.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	second, secondSet, secondAddr := f.dialFrom(1)
	got, _, err = secondSet.Reserve(10 * time.Second) // the first's TTR runs out meanwhile
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.NoError(t, second.Bury(id, 0))

	c := console.New(console.Options{})
	c.Open(f.b[1], nil)
	mux := http.NewServeMux()
	c.Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	want := []struct{ kind, addr string }{
		{"put", producerAddr}, {"reserved", firstAddr}, {"timed-out", firstAddr},
		{"reserved", secondAddr}, {"buried", secondAddr},
	}
	res, err := http.Get(hs.URL + "/api/job?id=" + strconv.FormatUint(id, 10))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var j console.Job
	require.NoError(t, json.NewDecoder(res.Body).Decode(&j))
	require.Len(t, j.Events, len(want), "events %+v", j.Events)
	for i, w := range want {
		e := j.Events[i]
		require.Equal(t, w.kind, e.Kind, "event %d", i)
		require.Equal(t, w.addr, e.Addr, "event %d", i)
		require.NotEmpty(t, e.Session, "event %d", i)
		require.Empty(t, e.Policy, "event %d", i)
	}
	require.Equal(t, j.Events[1].Session, j.Events[2].Session, "the timeout names the first holder")
	require.NotEqual(t, j.Events[1].Session, j.Events[3].Session)

	var out, errOut bytes.Buffer
	code := ctl.Execute(context.Background(), []string{"--api", hs.URL, "job", strconv.FormatUint(id, 10)}, nil, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2+len(want), out.String()) // the stats line, the header, the events
	require.Contains(t, lines[0], "buried")
	for i, w := range want {
		f := strings.Fields(lines[2+i])
		require.Equal(t, w.kind, f[1], "line %q", lines[2+i])
		require.Equal(t, string(j.Events[i].Session), f[2], "line %q", lines[2+i])
		require.Equal(t, w.addr, f[3], "line %q", lines[2+i])
	}
	require.Contains(t, lines[len(lines)-1], "by the worker")
}
