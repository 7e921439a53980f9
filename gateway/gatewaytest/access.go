package gatewaytest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	beanstalk "github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// RunAccess checks principals, grants, tenants and quotas (docs/security.md) over TCP, with the
// raw protocol and with an unmodified client (go-beanstalk). newStore must return a Backend on a
// namespace of its own at each call (a fresh Redis prefix, PostgreSQL schema, memory engine), as
// a tenant's store is, and register its cleanup. Cases run in parallel.
func RunAccess(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	cases := []struct {
		name string
		run  func(t *testing.T, newStore func(t *testing.T) backend.Backend)
	}{
		{"PutGrant", putGrant},
		{"ReserveGrant", reserveGrant},
		{"InspectGrant", inspectGrant},
		{"ManageGrant", manageGrant},
		{"ListTubesShowsOnlyGrantedTubes", listTubesFiltered},
		{"UnmodifiedClientIsRefusedAndCarriesOn", unmodifiedClient},
		{"WithoutAnonymousAccessAConnectionMustAuthenticate", mustAuthenticate},
		{"AnonymousConnectionAuthenticatesIntoItsTenant", anonymousAuthenticates},
		{"TwoTenantsWithTheSameTubesDoNotMeet", tenantsIsolated},
		{"StatsShowOnlyTheTenantsOwnActivity", tenantStatsOwn},
		{"ConsoleAPIKeepsTenantsApart", consoleAPIIsolated},
		{"MaxJobsQuota", maxJobsQuota},
		{"MaxBytesQuota", maxBytesQuota},
		{"PutRateQuota", putRateQuota},
		{"PipelinedPutsStopAtTheQuota", pipelinedPutsStopAtQuota},
		{"ReloadUnderLoadChangesGrantsForTheNextCommand", reloadUnderLoad},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore)
		})
	}
}

// The principals most cases use, all in the main store, each holding one grant on app-*; the
// anonymous principal may put in public-*.
func teamAccess() gateway.AccessConfig {
	one := func(name string, g gateway.Grant) gateway.Principal {
		return gateway.Principal{Name: name, TokenHashes: tokens(name + "-token"),
			Grants: []gateway.TubeGrant{{Tubes: []string{"app-*"}, Allow: g}}}
	}
	return gateway.AccessConfig{
		Principals: []gateway.Principal{
			one("producer", gateway.GrantPut), one("worker", gateway.GrantReserve),
			one("viewer", gateway.GrantInspect), one("admin", gateway.GrantManage),
		},
		Anonymous: &gateway.Principal{Grants: []gateway.TubeGrant{{Tubes: []string{"public-*"}, Allow: gateway.GrantPut}}},
	}
}

func startWithAccess(t *testing.T, store backend.Backend, ac gateway.AccessConfig) (string, *gateway.Server) {
	t.Helper()
	a, err := gateway.NewAccess(ac)
	require.NoError(t, err)
	return StartServer(t, store, gateway.Config{Access: a})
}

// as dials addr and authenticates as name (its token is name+"-token"); "" stays anonymous.
func as(t *testing.T, addr, name string) *Client {
	t.Helper()
	c := Dial(t, addr)
	if name != "" {
		c.Do("auth "+name+"-token\r\n", "AUTHENTICATED\r\n")
	}
	return c
}

// putIn puts body in tube as the producer and returns the id.
func putIn(t *testing.T, addr, tube, body string) string {
	t.Helper()
	c := as(t, addr, "producer")
	c.Do("use "+tube+"\r\n", "USING "+tube+"\r\n")
	reply := c.Do(fmt.Sprintf("put 0 0 60 %d\r\n%s\r\n", len(body), body), "INSERTED {n}\r\n")
	return strings.TrimSuffix(strings.TrimPrefix(reply, "INSERTED "), "\r\n")
}

func putGrant(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), teamAccess())
	p := as(t, addr, "producer")
	p.Do("use app-a\r\n", "USING app-a\r\n")
	p.Do("put 0 0 60 2\r\nhi\r\n", "INSERTED {n}\r\n")
	p.Do("use other\r\nput 0 0 60 2\r\nhi\r\n", "USING other\r\nUNAUTHORIZED\r\n")
	for _, who := range []string{"worker", "viewer", "admin"} {
		c := as(t, addr, who)
		// The body of a refused put is read and dropped: the next command is answered.
		c.Do("put 0 0 60 2\r\nhi\r\nlist-tube-used\r\n", "UNAUTHORIZED\r\nUSING default\r\n")
	}
	v := as(t, addr, "viewer") // may use app-a to peek there, but not put
	v.Do("use app-a\r\n", "USING app-a\r\n")
	v.Do("put 0 0 60 2\r\nhi\r\n", "UNAUTHORIZED\r\n")
	w := as(t, addr, "worker")
	w.Do("use app-a\r\nput 0 0 60 2\r\nhi\r\n", "USING app-a\r\nUNAUTHORIZED\r\n")
	anon := as(t, addr, "")
	anon.Do("use public-x\r\n", "USING public-x\r\n")
	anon.Do("put 0 0 60 2\r\nhi\r\n", "INSERTED {n}\r\n")
	anon.Do("use app-a\r\nput 0 0 60 2\r\nhi\r\n", "USING app-a\r\nUNAUTHORIZED\r\n")
}

func reserveGrant(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), teamAccess())
	for i := 0; i < 3; i++ {
		putIn(t, addr, "app-a", "job"+strconv.Itoa(i))
	}
	w := as(t, addr, "worker")
	w.Do("reserve-with-timeout 0\r\n", "UNAUTHORIZED\r\n") // watching only default
	w.Do("watch app-a\r\n", "WATCHING 2\r\n")
	w.Do("watch other\r\n", "WATCHING 3\r\n")
	// default is still watched, but a reserve takes only from tubes the worker may reserve from.
	id1 := jobID(w.Do("reserve-with-timeout 0\r\n", "RESERVED {n} 4\r\njob{n}\r\n"))
	w.Do("delete "+id1+"\r\n", "DELETED\r\n")
	id2 := jobID(w.Do("reserve\r\n", "RESERVED {n} 4\r\njob{n}\r\n"))
	w.Do("touch "+id2+"\r\n", "TOUCHED\r\n")
	w.Do("release "+id2+" 0 0\r\n", "RELEASED\r\n")
	id3 := jobID(w.Do("reserve-job "+id2+"\r\n", "RESERVED {n} 4\r\njob{n}\r\n"))
	w.Do("bury "+id3+" 0\r\n", "BURIED\r\n")
	// A job it did not reserve: its delete needs manage.
	w.Do("delete "+id3+"\r\n", "UNAUTHORIZED\r\n")
	for _, who := range []string{"producer", "viewer", "admin"} {
		c := as(t, addr, who)
		c.Do("watch app-a\r\nreserve-with-timeout 0\r\n", "WATCHING 2\r\nUNAUTHORIZED\r\n")
		c.Do("reserve-job "+id3+"\r\n", "UNAUTHORIZED\r\n")
	}
	as(t, addr, "").Do("reserve-job "+id3+"\r\n", "NOT_FOUND\r\n") // no grant there at all
}

func inspectGrant(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), teamAccess())
	id := putIn(t, addr, "app-a", "hello")
	v := as(t, addr, "viewer")
	v.Do("use app-a\r\n", "USING app-a\r\n")
	v.Do("peek-ready\r\n", "FOUND "+id+" 5\r\nhello\r\n")
	v.Do("peek-delayed\r\n", "NOT_FOUND\r\n")
	v.Do("peek "+id+"\r\n", "FOUND "+id+" 5\r\nhello\r\n")
	require.Contains(t, data(t, v, "stats-job "+id+"\r\n"), "\ntube: \"app-a\"\n")
	require.Equal(t, 1, figure(t, data(t, v, "stats-tube app-a\r\n"), "current-jobs-ready"))
	for _, who := range []string{"producer", "worker", "admin"} {
		c := as(t, addr, who)
		c.Do("peek "+id+"\r\n", "UNAUTHORIZED\r\n")
		c.Do("stats-job "+id+"\r\n", "UNAUTHORIZED\r\n")
		c.Do("stats-tube app-a\r\n", "UNAUTHORIZED\r\n")
	}
	p := as(t, addr, "producer")
	p.Do("use app-a\r\n", "USING app-a\r\n")
	p.Do("peek-ready\r\n", "UNAUTHORIZED\r\n")
	anon := as(t, addr, "")
	anon.Do("peek "+id+"\r\n", "NOT_FOUND\r\n")
	anon.Do("stats-job "+id+"\r\n", "NOT_FOUND\r\n")
}

func manageGrant(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), teamAccess())
	ids := []string{putIn(t, addr, "app-a", "a"), putIn(t, addr, "app-a", "b"), putIn(t, addr, "app-a", "c")}
	w := as(t, addr, "worker")
	w.Do("watch app-a\r\nignore default\r\n", "WATCHING 2\r\nWATCHING 1\r\n")
	buried := jobID(w.Do("reserve-with-timeout 0\r\n", "RESERVED {n} 1\r\n{*}\r\n"))
	w.Do("bury "+buried+" 0\r\n", "BURIED\r\n")
	for _, who := range []string{"producer", "worker", "viewer"} {
		c := as(t, addr, who)
		c.Do("kick 10\r\n", "UNAUTHORIZED\r\n") // default: nothing granted there
		c.Do("kick-job "+buried+"\r\n", "UNAUTHORIZED\r\n")
		c.Do("pause-tube app-a 0\r\n", "UNAUTHORIZED\r\n")
		c.Do("delete "+ids[2]+"\r\n", "UNAUTHORIZED\r\n")
	}
	a := as(t, addr, "admin")
	a.Do("use app-a\r\n", "USING app-a\r\n")
	a.Do("kick-job "+buried+"\r\n", "KICKED\r\n")
	a.Do("pause-tube app-a 0\r\n", "PAUSED\r\n")
	a.Do("delete "+ids[2]+"\r\n", "DELETED\r\n")
	w.Do("reserve-with-timeout 0\r\n", "RESERVED {n} 1\r\n{*}\r\n")
	b := jobID(w.Do("reserve-with-timeout 0\r\n", "RESERVED {n} 1\r\n{*}\r\n"))
	w.Do("bury "+b+" 0\r\n", "BURIED\r\n")
	a.Do("kick 10\r\n", "KICKED 1\r\n")
	a.Do("pause-tube other 0\r\n", "UNAUTHORIZED\r\n")
	as(t, addr, "").Do("kick-job "+b+"\r\n", "NOT_FOUND\r\n")
}

func listTubesFiltered(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), teamAccess())
	putIn(t, addr, "app-a", "x")
	anon := as(t, addr, "")
	anon.Do("use public-x\r\nput 0 0 60 1\r\ny\r\n", "USING public-x\r\nINSERTED {n}\r\n")
	for _, c := range []struct{ who, want string }{
		{"viewer", "---\n- app-a\n"},
		{"", "---\n- public-x\n"},
		{"producer", "---\n- app-a\n"},
	} {
		require.Equal(t, c.want, data(t, as(t, addr, c.who), "list-tubes\r\n"), c.who)
	}
}

func unmodifiedClient(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), teamAccess())
	anon := authDial(t, addr, "")
	_, err := beanstalk.NewTube(anon, "app-a").Put([]byte("x"), 0, 0, time.Minute)
	require.ErrorContains(t, err, "UNAUTHORIZED")
	id, err := beanstalk.NewTube(anon, "public-a").Put([]byte("x"), 0, 0, time.Minute)
	require.NoError(t, err, "the connection carries on after a refusal")
	_, _, err = beanstalk.NewTubeSet(anon, "app-a").Reserve(0)
	require.ErrorContains(t, err, "UNAUTHORIZED")
	_, err = anon.Peek(id)
	require.ErrorContains(t, err, "UNAUTHORIZED", "public-a is seen only to put")
	tubes, err := anon.ListTubes()
	require.NoError(t, err)
	require.Equal(t, []string{"public-a"}, tubes)

	worker := authDial(t, addr, "worker")
	_, err = beanstalk.NewTube(worker, "app-a").Put([]byte("x"), 0, 0, time.Minute)
	require.ErrorContains(t, err, "UNAUTHORIZED")
	producer := authDial(t, addr, "producer")
	id, err = beanstalk.NewTube(producer, "app-a").Put([]byte("job"), 0, 0, time.Minute)
	require.NoError(t, err)
	ts := beanstalk.NewTubeSet(worker, "app-a")
	got, body, err := ts.Reserve(time.Second)
	require.NoError(t, err, "the worker's connection carries on after its refused put")
	require.Equal(t, id, got)
	require.Equal(t, "job", string(body))
	require.NoError(t, worker.Delete(id))
	viewer := authDial(t, addr, "viewer")
	_, err = viewer.Peek(id)
	require.ErrorIs(t, err, beanstalk.ErrNotFound)
	tubes, err = viewer.ListTubes()
	require.NoError(t, err)
	require.Equal(t, []string{"app-a"}, tubes)
}

// authDial is a go-beanstalk connection to addr that has authenticated as who ("": anonymous).
// go-beanstalk knows no auth command: the line goes first over the raw socket, which the client
// then takes over.
func authDial(t *testing.T, addr, who string) *beanstalk.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, ReplyTimeout)
	require.NoError(t, err)
	if who != "" {
		_, err = nc.Write([]byte("auth " + who + "-token\r\n"))
		require.NoError(t, err)
		want := "AUTHENTICATED\r\n"
		got := make([]byte, len(want)) // exactly the reply: nothing of a later one is consumed
		_ = nc.SetReadDeadline(time.Now().Add(ReplyTimeout))
		_, err = io.ReadFull(nc, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		_ = nc.SetReadDeadline(time.Time{})
	}
	c := beanstalk.NewConn(nc)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// data sends cmd and returns the YAML of its "OK <n>" reply.
func data(t *testing.T, c *Client, cmd string) string {
	t.Helper()
	head := c.Do(cmd, "OK {n}\r\n")
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "OK ")))
	require.NoError(t, err)
	got, err := c.expect(regexp.MustCompile(`(?s)\A.{` + strconv.Itoa(n) + `}\r\n`))
	require.NoError(t, err)
	return got[:n]
}

// figure reads "key: n" from YAML.
func figure(t *testing.T, yaml, key string) int {
	t.Helper()
	for _, line := range strings.Split(yaml, "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			return n
		}
	}
	require.Failf(t, "no such figure", "%s in %q", key, yaml)
	return 0
}

func mustAuthenticate(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	ac := teamAccess()
	ac.Anonymous = nil
	addr, _ := startWithAccess(t, newStore(t), ac)
	Dial(t, addr).Do("list-tubes\r\n", "UNAUTHORIZED\r\n")
	c := Dial(t, addr)
	c.Do("auth nobody\r\n", "UNAUTHORIZED\r\n")
	c.ExpectClosed()
	p := as(t, addr, "producer")
	p.Do("use app-a\r\n", "USING app-a\r\n")
}

func anonymousAuthenticates(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	ac := teamAccess()
	ac.Tenants = []gateway.Tenant{{Name: "team", Store: newStore(t)}}
	ac.Principals = append(ac.Principals, gateway.Principal{Name: "team-app", Tenant: "team", TokenHashes: tokens("team-app-token"),
		Grants: []gateway.TubeGrant{{Tubes: []string{"*"}, Allow: gateway.GrantPut | gateway.GrantReserve | gateway.GrantInspect}}})
	addr, _ := startWithAccess(t, newStore(t), ac)
	c := Dial(t, addr)
	c.Do("use public-a\r\nput 0 0 60 4\r\nanon\r\n", "USING public-a\r\nINSERTED {n}\r\n")
	// Moving to another tenant starts afresh there: default used and watched.
	c.Do("auth team-app-token\r\n", "AUTHENTICATED\r\n")
	c.Do("list-tube-used\r\n", "USING default\r\n")
	c.Do("put 0 0 60 4\r\nteam\r\n", "INSERTED {n}\r\n")
	c.Do("list-tubes\r\n", "OK 14\r\n---\n- default\n\r\n")
	c.Do("auth wrong\r\n", "UNAUTHORIZED\r\n")
	c.ExpectClosed()
}

// allGrants holds every grant on every tube.
var allGrants = []gateway.TubeGrant{{Tubes: []string{"*"}, Allow: gateway.GrantPut | gateway.GrantReserve | gateway.GrantInspect | gateway.GrantManage}}

// twoTenants: tenants red and blue, each with its principal of the same name holding every
// grant there.
func twoTenants(t *testing.T, newStore func(t *testing.T) backend.Backend) gateway.AccessConfig {
	return gateway.AccessConfig{
		Tenants: []gateway.Tenant{{Name: "red", Store: newStore(t)}, {Name: "blue", Store: newStore(t)}},
		Principals: []gateway.Principal{
			{Name: "red", Tenant: "red", TokenHashes: tokens("red-token"), Grants: allGrants},
			{Name: "blue", Tenant: "blue", TokenHashes: tokens("blue-token"), Grants: allGrants},
		},
	}
}

func tenantsIsolated(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, _ := startWithAccess(t, newStore(t), twoTenants(t, newStore))
	red, blue := as(t, addr, "red"), as(t, addr, "blue")
	red.Do("use jobs\r\n", "USING jobs\r\n")
	blue.Do("use jobs\r\n", "USING jobs\r\n")
	redIDs := []string{}
	for i := 0; i < 3; i++ {
		redIDs = append(redIDs, jobID(red.Do("put 0 0 60 3\r\nred\r\n", "INSERTED {n}\r\n")))
	}
	blueID := jobID(blue.Do("put 0 0 60 4\r\nblue\r\n", "INSERTED {n}\r\n"))
	require.Equal(t, redIDs[0], blueID, "each tenant numbers its own jobs")
	red.Do("use red-only\r\nput 0 0 60 1\r\nr\r\n", "USING red-only\r\nINSERTED {n}\r\n")

	require.Equal(t, 1, figure(t, data(t, blue, "stats-tube jobs\r\n"), "current-jobs-ready"))
	require.Equal(t, 3, figure(t, data(t, red, "stats-tube jobs\r\n"), "current-jobs-ready"))
	require.Equal(t, 1, figure(t, data(t, blue, "stats\r\n"), "current-jobs-ready"))
	require.Equal(t, 4, figure(t, data(t, red, "stats\r\n"), "current-jobs-ready"))
	require.Equal(t, 1, figure(t, data(t, blue, "stats\r\n"), "total-jobs"))
	require.Equal(t, "---\n- default\n- jobs\n", data(t, blue, "list-tubes\r\n"))
	blue.Do("stats-tube red-only\r\n", "NOT_FOUND\r\n")
	blue.Do("watch jobs\r\nignore default\r\n", "WATCHING 2\r\nWATCHING 1\r\n")
	blue.Do("reserve-with-timeout 0\r\n", "RESERVED "+blueID+" 4\r\nblue\r\n")
	blue.Do("reserve-with-timeout 0\r\n", "TIMED_OUT\r\n")
	blue.Do("peek "+redIDs[2]+"\r\n", "NOT_FOUND\r\n")
	red.Do("watch jobs\r\n", "WATCHING 2\r\n")
	red.Do("reserve-with-timeout 0\r\n", "RESERVED "+redIDs[0]+" 3\r\nred\r\n")
}

// gatewayFigures are the stats figures the gateway counts itself, rather than reads from the store.
var gatewayFigures = []string{
	"cmd-put", "cmd-peek", "cmd-peek-ready", "cmd-peek-delayed", "cmd-peek-buried", "cmd-reserve",
	"cmd-reserve-with-timeout", "cmd-delete", "cmd-release", "cmd-use", "cmd-watch", "cmd-ignore",
	"cmd-bury", "cmd-kick", "cmd-touch", "cmd-stats", "cmd-stats-job", "cmd-stats-tube",
	"cmd-list-tubes", "cmd-list-tube-used", "cmd-list-tubes-watched", "cmd-pause-tube",
	"current-connections", "current-producers", "current-workers", "current-waiting",
	"total-connections",
}

// tenantStatsOwn: one tenant's connections and commands do not show in another's stats or
// stats-tube, while they show in its own.
func tenantStatsOwn(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	ac := twoTenants(t, newStore)
	ac.Anonymous = &gateway.Principal{Grants: allGrants} // in the main store
	addr, srv := startWithAccess(t, newStore(t), ac)
	blue := as(t, addr, "blue")
	blue.Do("watch jobs\r\n", "WATCHING 2\r\n")
	blueTube := data(t, blue, "stats-tube jobs\r\n")
	before := data(t, blue, "stats\r\n")

	red := as(t, addr, "red")
	red.Do("use jobs\r\nwatch jobs\r\n", "USING jobs\r\nWATCHING 2\r\n")
	id := jobID(red.Do("put 0 0 60 3\r\nred\r\n", "INSERTED {n}\r\n"))
	red.Do("reserve-with-timeout 0\r\n", "RESERVED "+id+" 3\r\nred\r\n")
	red.Do("release "+id+" 0 0\r\npeek-ready\r\nlist-tubes-watched\r\n", "RELEASED\r\nFOUND "+id+" 3\r\nred\r\nOK {n}\r\n---\n- default\n- jobs\n\r\n")
	red.Do("delete "+id+"\r\n", "DELETED\r\n")
	waiter := as(t, addr, "red") // waits in a reserve on red's jobs
	waiter.Send("watch jobs\r\nreserve\r\n")
	waiter.Expect("WATCHING 2\r\n")
	anon := as(t, addr, "") // the main store's
	anon.Do("use jobs\r\nput 0 0 60 4\r\nmain\r\n", "USING jobs\r\nINSERTED {n}\r\n")
	require.Eventually(t, func() bool {
		return figure(t, data(t, red, "stats\r\n"), "current-waiting") == 1
	}, 5*time.Second, 10*time.Millisecond, "red's stats show its own waiting worker: %s", data(t, red, "stats\r\n"))

	after := data(t, blue, "stats\r\n")
	for _, key := range gatewayFigures {
		want := figure(t, before, key)
		if key == "cmd-stats" {
			want++ // blue's own
		}
		require.Equal(t, want, figure(t, after, key), "blue's %s after red's and the main store's activity", key)
	}
	require.Equal(t, 1, figure(t, after, "current-connections"))
	require.Equal(t, 1, figure(t, after, "total-connections"))
	for _, key := range []string{"current-using", "current-watching", "current-waiting"} {
		require.Equal(t, figure(t, blueTube, key), figure(t, data(t, blue, "stats-tube jobs\r\n"), key), "blue's stats-tube jobs %s", key)
	}

	// Red sees its own: two connections, one producer, both workers, one waiting.
	own := data(t, red, "stats\r\n")
	for key, want := range map[string]int{
		"cmd-put": 1, "cmd-reserve-with-timeout": 1, "cmd-reserve": 1, "cmd-release": 1,
		"cmd-delete": 1, "cmd-peek-ready": 1, "cmd-use": 1, "cmd-watch": 2,
		"current-connections": 2, "total-connections": 2, "current-producers": 1,
		"current-workers": 2, "current-waiting": 1,
	} {
		require.Equal(t, want, figure(t, own, key), "red's %s", key)
	}
	require.Equal(t, 1, figure(t, data(t, red, "stats-tube jobs\r\n"), "current-waiting"))
	main := data(t, anon, "stats\r\n")
	require.Equal(t, 1, figure(t, main, "cmd-put"), "the main store's own puts")
	require.Equal(t, 1, figure(t, main, "current-connections"))
	require.Equal(t, 0, figure(t, data(t, anon, "stats-tube jobs\r\n"), "current-waiting"))

	// The metrics keep the process's totals: blue, red, red's waiter and anon.
	f := srv.Figures()
	require.Equal(t, gateway.Figures{Connections: 4, TotalConnections: 4, Producers: 2, Workers: 2, Waiting: 1}, f)
}

// quotaServer serves one principal, "app", in tenant "team" with the quotas of tn.
func quotaServer(t *testing.T, newStore func(t *testing.T) backend.Backend, tn gateway.Tenant) string {
	tn.Name, tn.Store = "team", newStore(t)
	addr, _ := startWithAccess(t, newStore(t), gateway.AccessConfig{
		Tenants: []gateway.Tenant{tn},
		Principals: []gateway.Principal{{Name: "app", Tenant: "team", TokenHashes: tokens("app-token"),
			Grants: []gateway.TubeGrant{{Tubes: []string{"*"}, Allow: gateway.GrantPut | gateway.GrantReserve | gateway.GrantInspect}}}},
	})
	return addr
}

// readyJobs is the tenant's current-jobs-ready, as c sees it.
func readyJobs(t *testing.T, c *Client) int {
	t.Helper()
	return figure(t, data(t, c, "stats-tube default\r\n"), "current-jobs-ready")
}

func maxJobsQuota(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr := quotaServer(t, newStore, gateway.Tenant{MaxJobs: 3})
	c := as(t, addr, "app")
	for i := 0; i < 3; i++ {
		c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
	}
	c.Do("put 0 0 60 1\r\nx\r\n", "OUT_OF_MEMORY\r\n")
	c.Do("put 0 0 60 1\r\nx\r\n", "OUT_OF_MEMORY\r\n")
	require.Equal(t, 3, readyJobs(t, c), "every acknowledged job kept, none other")
	id := jobID(c.Do("reserve-with-timeout 0\r\n", "RESERVED {n} 1\r\nx\r\n"))
	c.Do("delete "+id+"\r\n", "DELETED\r\n")
	// Room again once the gateway has read the store's figure anew.
	require.Eventually(t, func() bool {
		c.Send("put 0 0 60 1\r\nx\r\n")
		reply := c.Expect("{*}\r\n")
		return strings.HasPrefix(reply, "INSERTED ")
	}, 5*time.Second, 50*time.Millisecond)
	require.Equal(t, 3, readyJobs(t, c))
}

func maxBytesQuota(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr := quotaServer(t, newStore, gateway.Tenant{MaxBytes: 100})
	c := as(t, addr, "app")
	body := strings.Repeat("b", 30)
	for i := 0; i < 3; i++ { // 30, 60, 90 bytes kept
		c.Do("put 0 0 60 30\r\n"+body+"\r\n", "INSERTED {n}\r\n")
	}
	c.Do("put 0 0 60 30\r\n"+body+"\r\n", "OUT_OF_MEMORY\r\n") // 120 > 100
	c.Do("put 0 0 60 5\r\nsmall\r\n", "INSERTED {n}\r\n")      // 90 + 5 fits
	require.Equal(t, 4, readyJobs(t, c))
}

func putRateQuota(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr := quotaServer(t, newStore, gateway.Tenant{PutRate: 5})
	c := as(t, addr, "app")
	inserted, refused := 0, 0
	for i := 0; i < 8; i++ {
		reply := c.Do("put 0 0 60 1\r\nx\r\n", "{*}\r\n")
		switch reply {
		case "OUT_OF_MEMORY\r\n":
			refused++
		default:
			require.Regexp(t, `^INSERTED \d+\r\n$`, reply)
			inserted++
		}
	}
	require.GreaterOrEqual(t, inserted, 5, "the burst")
	require.LessOrEqual(t, inserted, 6, "a burst of put_rate, and what refilled meanwhile")
	require.Equal(t, 8, inserted+refused)
	require.Equal(t, inserted, readyJobs(t, c))
	time.Sleep(time.Second)
	c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
}

func pipelinedPutsStopAtQuota(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr := quotaServer(t, newStore, gateway.Tenant{MaxJobs: 3})
	c := as(t, addr, "app")
	c.Do(strings.Repeat("put 0 0 60 1\r\nx\r\n", 5),
		"INSERTED {n}\r\nINSERTED {n}\r\nINSERTED {n}\r\nOUT_OF_MEMORY\r\nOUT_OF_MEMORY\r\n")
	require.Equal(t, 3, readyJobs(t, c))
}

// reloadUnderLoad replaces the Access while producers put without pause: no connection drops,
// and once SetAccess has returned, the next command of each obeys the new grants.
func reloadUnderLoad(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	addr, srv := startWithAccess(t, newStore(t), teamAccess())
	const producers = 4
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	inserted := make([]atomic.Int64, producers)
	for i := range producers {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := bufio.NewReader(conn)
			send := func(cmd string) (string, error) {
				if _, err := conn.Write([]byte(cmd)); err != nil {
					return "", err
				}
				_ = conn.SetReadDeadline(time.Now().Add(ReplyTimeout))
				return rd.ReadString('\n')
			}
			for _, cmd := range []string{"auth producer-token\r\n", "use app-a\r\n"} {
				if _, err := send(cmd); err != nil {
					errs <- err
					return
				}
			}
			for !stop.Load() {
				got, err := send("put 0 0 60 1\r\nx\r\n")
				switch {
				case err != nil:
					errs <- fmt.Errorf("producer %d: %w", i, err)
					return
				case strings.HasPrefix(got, "INSERTED "):
					inserted[i].Add(1)
				case got != "UNAUTHORIZED\r\n":
					errs <- fmt.Errorf("producer %d: %q", i, got)
					return
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	watcher := as(t, addr, "producer")
	watcher.Do("use app-a\r\n", "USING app-a\r\n")
	for round := 0; round < 4; round++ {
		ac := teamAccess()
		if round%2 == 0 { // the producer loses put
			ac.Principals[0].Grants = []gateway.TubeGrant{{Tubes: []string{"app-*"}, Allow: gateway.GrantInspect}}
		}
		a, err := gateway.NewAccess(ac)
		require.NoError(t, err)
		require.NoError(t, srv.SetAccess(a))
		if round%2 == 0 {
			watcher.Do("put 0 0 60 1\r\nx\r\n", "UNAUTHORIZED\r\n")
			watcher.Do("peek-ready\r\n", "FOUND {n} 1\r\nx\r\n")
		} else {
			watcher.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "no producer's connection dropped")
	}
	for i := range inserted {
		require.Positive(t, inserted[i].Load(), "producer %d put", i)
	}
}

func tokens(t string) [][32]byte { return [][32]byte{gateway.HashToken(t)} }

func jobID(reply string) string {
	f := strings.Fields(reply)
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// RunTenantQuotaAcrossGateways checks that max_jobs holds fleet-wide: a gateway counts the jobs
// the others put, as its store keeps them. newPair returns two Backends on one namespace, as two
// gateway processes would have, and registers their cleanup.
func RunTenantQuotaAcrossGateways(t *testing.T, newPair func(t *testing.T) (a, b backend.Backend)) {
	a, b := newPair(t)
	start := func(store backend.Backend) string {
		addr, _ := startWithAccess(t, store, gateway.AccessConfig{
			Tenants: []gateway.Tenant{{Name: "team", Store: store, MaxJobs: 4}},
			Principals: []gateway.Principal{{Name: "app", Tenant: "team", TokenHashes: tokens("app-token"),
				Grants: []gateway.TubeGrant{{Tubes: []string{"*"}, Allow: gateway.GrantPut | gateway.GrantInspect}}}},
		})
		return addr
	}
	ca, cb := as(t, start(a), "app"), as(t, start(b), "app")
	ca.Do("put 0 0 60 1\r\nx\r\nput 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\nINSERTED {n}\r\n")
	// The second gateway reads the store's count at its first put: two kept, room for two.
	cb.Do("put 0 0 60 1\r\nx\r\nput 0 0 60 1\r\nx\r\nput 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\nINSERTED {n}\r\nOUT_OF_MEMORY\r\n")
	require.Equal(t, 4, readyJobs(t, ca))
	time.Sleep(300 * time.Millisecond) // past the first gateway's refresh
	ca.Do("put 0 0 60 1\r\nx\r\n", "OUT_OF_MEMORY\r\n")
	require.Equal(t, 4, readyJobs(t, cb))
}
