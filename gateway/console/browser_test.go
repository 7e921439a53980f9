package console_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/console"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// world is one beangate (memory store) serving the beanstalk protocol over TCP and the console
// over HTTP, as cmd/beangate wires them.
type world struct {
	t    *testing.T
	addr string // beanstalk protocol
	url  string // console
	// gateway is the process id its connections' session ids start with.
	gateway string
	store   backend.Backend
}

func startWorld(t *testing.T, opts console.Options) *world {
	t.Helper()
	store := memory.New(memory.Options{})
	t.Cleanup(func() { _ = store.Close() })
	sessions := backend.NewSessionIDs()
	addr, srv := gatewaytest.StartServer(t, store, gateway.Config{Sessions: sessions})
	if opts.Gateway == "" {
		opts.Gateway = sessions.Process()
	}
	c := console.New(opts)
	c.Open(store, srv.TubeWaiting)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go c.Run(ctx)
	mux := http.NewServeMux()
	c.Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return &world{t: t, addr: addr, url: hs.URL, gateway: opts.Gateway, store: store}
}

// conn is a beanstalk client over TCP, through which every effect is checked.
func (w *world) conn() *beanstalk.Conn {
	w.t.Helper()
	c, err := beanstalk.Dial("tcp", w.addr)
	require.NoError(w.t, err)
	w.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (w *world) put(tube string, n int, body func(i int) string) []uint64 {
	w.t.Helper()
	tb := beanstalk.NewTube(w.conn(), tube)
	ids := make([]uint64, n)
	for i := range n {
		id, err := tb.Put([]byte(body(i)), 100, 0, time.Minute)
		require.NoError(w.t, err)
		ids[i] = id
	}
	return ids
}

func (w *world) tubeStat(tube, key string) string {
	w.t.Helper()
	st, err := beanstalk.NewTube(w.conn(), tube).Stats()
	if err != nil {
		return "error: " + err.Error()
	}
	return st[key]
}

// browser starts one headless Chromium for the whole test; each scenario opens its own tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		backendtest.Unavailable(t, "chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true))...)
	t.Cleanup(cancel)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(ctx)) // starts the browser
	return ctx
}

// tab opens a tab with the given extra request headers and a deadline.
func tab(t *testing.T, browserCtx context.Context, headers map[string]any) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(cancelTimeout)
	if headers != nil {
		_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
		require.NoError(t, err)
		_, err = chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers(headers)})
		require.NoError(t, err)
	}
	return ctx
}

// until waits for a JavaScript condition on the page.
func until(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(10*time.Second))
}

// cellIs is the condition that selector's text is want.
func cellIs(selector, want string) chromedp.Action[chromedp.Void] {
	return until(fmt.Sprintf(`(document.querySelector(%q)||{}).textContent === %q`, selector, want))
}

func TestConsoleInChromium(t *testing.T) {
	b := browser(t)

	t.Run("OverviewCountsFollowPuts", func(t *testing.T) {
		auth, header := basicAuth(t) // actions on, as the docs' picture shows the header
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		w.put("emails", 3, func(i int) string { return fmt.Sprintf(`{"to":"user%d@example.com"}`, i) })
		ctx := tab(t, b, map[string]any{"Authorization": header})
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"),
			cellIs(`tr[data-tube="emails"] .ready`, "3"),
			// stats-tube's total-jobs counts every put since start, not jobs held now: say so.
			cellIs(`#tubes thead th:nth-child(7)`, "total jobs")))
		w.put("emails", 4, func(int) string { return "x" })
		w.put("thumbnails", 2, func(int) string { return "y" })
		require.NoError(t, chromedp.Do(ctx,
			cellIs(`tr[data-tube="emails"] .ready`, "7"),
			cellIs(`tr[data-tube="thumbnails"] .ready`, "2")))
		// Paused live view: a put does not show until it is resumed.
		require.NoError(t, chromedp.Do(ctx, chromedp.Click("#live")))
		w.put("emails", 1, func(int) string { return "z" })
		time.Sleep(1500 * time.Millisecond)
		require.NoError(t, chromedp.Do(ctx, cellIs(`tr[data-tube="emails"] .ready`, "7"),
			chromedp.Click("#live"), cellIs(`tr[data-tube="emails"] .ready`, "8")))
		// A schedule, for the docs' picture to show one.
		require.NoError(t, w.store.SetSchedule(context.Background(), backend.Schedule{Name: "hourly-report",
			Tube: "reports", Cron: "0 * * * *", TTR: time.Minute}))
		require.NoError(t, chromedp.Do(ctx, cellIs(`#schedules tr[data-key="hourly-report"] .tube`, "reports")))
		screenshot(t, ctx, "console-overview")
	})

	t.Run("OverviewListsSchedulesWithLastAndNextRun", func(t *testing.T) {
		auth, header := basicAuth(t)
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		ctx := tab(t, b, map[string]any{"Authorization": header})
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"), until(`(document.querySelector('#no-schedules')||{}).hidden === false`)))
		bg := context.Background()
		require.NoError(t, w.store.SetSchedule(bg, backend.Schedule{Name: "minutely", Tube: "reports", Cron: "* * * * *",
			TTR: time.Minute}))
		tick := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
		id, fired, err := w.store.FireSchedule(bg, "minutely", tick)
		require.NoError(t, err)
		require.True(t, fired)
		at := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }
		row := `#schedules tr[data-key="minutely"] `
		require.NoError(t, chromedp.Do(ctx,
			cellIs(row+".tube", "reports"),
			cellIs(row+".when", "* * * * * (UTC)"),
			cellIs(row+".last-job", fmt.Sprint(id)),
			cellIs(row+".next-run", at(tick.Add(time.Minute))),
			until(`(document.querySelector('#schedules tr[data-key="minutely"] .last-run')||{textContent: ''}).textContent.endsWith(' UTC')`),
			until(`(document.querySelector('#no-schedules')||{}).hidden === true`)))
	})

	t.Run("TubePagePagesThroughJobsAndActsOnThem", func(t *testing.T) {
		auth, header := basicAuth(t) // actions need authentication
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		ids := w.put("work", 45, func(i int) string { return fmt.Sprintf(`{"n":%d,"kind":"resize"}`, i) })
		ctx := tab(t, b, map[string]any{"Authorization": header})
		rowID := func(i int) string { return fmt.Sprintf(`#jobs tbody tr:nth-child(%d)`, i) }
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/work"),
			until(`document.querySelectorAll('#jobs tbody tr').length === 20`),
			until(fmt.Sprintf(`document.querySelector(%q).dataset.id === "%d"`, rowID(1), ids[0])),
			chromedp.Click("#next"),
			until(fmt.Sprintf(`document.querySelector(%q).dataset.id === "%d"`, rowID(1), ids[20])),
			chromedp.Click("#next"),
			until(`document.querySelectorAll('#jobs tbody tr').length === 5`),
			until(`document.querySelector('#next').disabled`),
			chromedp.Click("#first"),
			until(fmt.Sprintf(`document.querySelector(%q).dataset.id === "%d"`, rowID(1), ids[0])),
		))

		// Delete the first job from its row, after confirming.
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Click(fmt.Sprintf(`button.delete-job[data-id="%d"]`, ids[0])),
			chromedp.WaitVisible("#confirm-yes"), chromedp.Click("#confirm-yes"),
			until(fmt.Sprintf(`!document.querySelector('tr[data-id="%d"]')`, ids[0]))))
		_, err := w.conn().Peek(ids[0])
		require.ErrorIs(t, err, beanstalk.ErrNotFound)

		// Bury five through the protocol, then kick three from the page.
		c := w.conn()
		ts := beanstalk.NewTubeSet(c, "work")
		for range 5 {
			id, _, err := ts.Reserve(time.Second)
			require.NoError(t, err)
			require.NoError(t, c.Bury(id, 1))
		}
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/work?state=buried"),
			until(`document.querySelectorAll('#jobs tbody tr').length === 5`),
			chromedp.SetValue("#kick-n", "3"), chromedp.Click("#kick"),
			until(`document.querySelectorAll('#jobs tbody tr').length === 2`)))
		require.Equal(t, "2", w.tubeStat("work", "current-jobs-buried"))

		// Pause, then move every job to another tube, confirming.
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue("#pause-s", "600"), chromedp.Click("#pause"),
			until(`!!document.querySelector('#paused')`)))
		require.Equal(t, "600", w.tubeStat("work", "pause"))
		// A policy, for the picture to show one.
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue("#pol-max-reserves", "5"), chromedp.Click("#pol-set"),
			cellIs("#tube-policy", "policy: max reserves 5")))
		// The charts of ready depth, puts/s and deletes/s, drawn once the history has a few samples.
		require.NoError(t, chromedp.Do(ctx, until(`document.querySelectorAll('.charts svg polyline').length === 3 &&
			parseInt((document.querySelector('.charts .title').textContent.match(/last (\d+)s/) || [0, 0])[1]) >= 4`)))
		screenshot(t, ctx, "console-tube")
		// With the live view running: it writes in place, so the form is not replaced under us.
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue("#move-to", "work-moved"), chromedp.Click("#move"),
			chromedp.WaitVisible("#confirm-yes"), chromedp.Click("#confirm-yes"),
			until(`document.querySelector('#msg').textContent.startsWith('move: done (44)')`)))
		require.Equal(t, "42", w.tubeStat("work-moved", "current-jobs-ready"))
		require.Equal(t, "2", w.tubeStat("work-moved", "current-jobs-buried"))
		st, err := w.conn().StatsJob(ids[44])
		require.NoError(t, err)
		require.Equal(t, `"work-moved"`, st["tube"]) // quoted in stats-job, as beanstalkd does

		// Put one from the page, then flush the new tube's ready jobs.
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/work-moved"),
			cellIs("#tube-name", "work-moved"), chromedp.WaitVisible("#put"), chromedp.SetValue("#put-body", "hello from the console"),
			chromedp.SetValue("#put-pri", "0"),
			chromedp.Click("#put"), cellIs("#jobs tbody tr:first-child .preview", "hello from the console"),
			chromedp.SetValue("#flush-state", "ready"), chromedp.Click("#flush"),
			chromedp.WaitVisible("#confirm-yes"), chromedp.Click("#confirm-yes"),
			until(`document.querySelectorAll('#jobs tbody tr').length === 0`)))
		require.Equal(t, "0", w.tubeStat("work-moved", "current-jobs-ready"))
		require.Equal(t, "2", w.tubeStat("work-moved", "current-jobs-buried"))
	})

	// The tube page shows the policy governing the tube, and sets and clears the tube's own.
	t.Run("TubePageShowsAndEditsPolicies", func(t *testing.T) {
		auth, header := basicAuth(t)
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		w.put("mail-bulk", 1, func(int) string { return "x" })
		ctx := tab(t, b, map[string]any{"Authorization": header})
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/mail-bulk"),
			cellIs("#tube-policy", "policy: none"),
			chromedp.SetValue("#pol-max-reserves", "1"), chromedp.SetValue("#pol-max-reserved", "2"),
			chromedp.SetValue("#pol-retry-delay", "0.5"), chromedp.SetValue("#pol-retry-delay-max", "600"),
			chromedp.Click("#pol-unique"), chromedp.Click("#pol-set"),
			cellIs("#tube-policy", "policy: max reserves 1 · retry delay 0.5s doubling up to 10.0m · max reserved 2 · unique")))

		// It acts on a plain client: a duplicate put returns the job, a release buries it.
		c := w.conn()
		c.Tube.Name = "mail-bulk"
		id, err := c.Put([]byte("x"), 0, 0, time.Minute)
		require.NoError(t, err)
		ts := beanstalk.NewTubeSet(c, "mail-bulk")
		got, _, err := ts.Reserve(time.Second)
		require.NoError(t, err)
		require.Equal(t, id, got)
		require.ErrorIs(t, c.Release(id, 0, 0), beanstalk.ErrBuried)

		require.NoError(t, chromedp.Do(ctx, chromedp.Click("#pol-clear"),
			chromedp.WaitVisible("#confirm-yes"), chromedp.Click("#confirm-yes"),
			cellIs("#tube-policy", "policy: none")))
	})

	// The live view writes only what changed: nodes keep their identity across refreshes (a
	// button or a field the user is about to use is never replaced), and a row whose figures
	// did not change is not touched at all.
	t.Run("LiveRefreshKeepsNodes", func(t *testing.T) {
		auth, header := basicAuth(t)
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		ids := w.put("busy", 3, func(i int) string { return fmt.Sprint(i) })
		w.put("steady", 2, func(int) string { return "x" })
		ctx := tab(t, b, map[string]any{"Authorization": header})

		// refreshes waits until the page has drawn twice more: #updated shows a new second.
		refreshes := func() {
			t.Helper()
			for range 2 {
				before, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#updated').textContent`))
				require.NoError(t, err)
				require.NoError(t, chromedp.Do(ctx, until(fmt.Sprintf(`document.querySelector('#updated').textContent !== %q`, before))))
			}
		}
		// detached lists the marked nodes that are no longer on the page, or no longer the
		// ones its selectors find.
		const detached = `Object.entries(window.marked).filter(([sel, n]) => !n.isConnected || document.querySelector(sel) !== n).map(([sel]) => sel).join(', ')`

		// Overview: mark, let the figures of one tube move, and look again.
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"), cellIs(`tr[data-tube="busy"] .ready`, "3")))
		refreshes() // the puts' second has left the rates
		require.NoError(t, chromedp.Do(ctx,
			until(`(window.marked = Object.fromEntries(['#tubes', 'tr[data-tube="busy"]', 'tr[data-tube="busy"] .ready',
				'tr[data-tube="busy"] a', 'tr[data-tube="steady"]', 'tr[data-tube="steady"] .ready'].map(s => [s, document.querySelector(s)])), true)`),
			// Every change the page makes to the steady tube's row, from here on.
			until(`(window.touched = [], new MutationObserver(ms => window.touched.push(...ms.map(m => m.type)))
				.observe(document.querySelector('tr[data-tube="steady"]'), {subtree: true, childList: true, characterData: true, attributes: true}), true)`)))
		w.put("busy", 2, func(int) string { return "y" })
		require.NoError(t, chromedp.Do(ctx, cellIs(`tr[data-tube="busy"] .ready`, "5")))
		refreshes()
		gone, err := chromedp.Run(ctx, chromedp.Evaluate[string](detached))
		require.NoError(t, err)
		require.Empty(t, gone, "replaced by a refresh")
		touched, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.touched.join(', ')`))
		require.NoError(t, err)
		require.Empty(t, touched, "the steady tube's row was written although nothing in it changed")

		// Tube page: a job row, its buttons, the tabs and a field being typed into.
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/busy"),
			until(`document.querySelectorAll('#jobs tbody tr').length === 5`),
			chromedp.SetValue("#move-to", "typed"), chromedp.Focus("#move-to"),
			until(fmt.Sprintf(`(window.marked = Object.fromEntries(['#jobs tbody tr[data-id="%d"]', 'button.delete-job[data-id="%d"]',
				'.tabs button[data-state="ready"]', '#move-to', '#kick', '#tube-figures', '#jobs tbody'].map(s => [s, document.querySelector(s)])), true)`, ids[0], ids[0]))))
		w.put("busy", 1, func(int) string { return "z" })
		require.NoError(t, chromedp.Do(ctx, cellIs(`.tabs button[data-state="ready"]`, "ready (6)")))
		refreshes()
		gone, err = chromedp.Run(ctx, chromedp.Evaluate[string](detached))
		require.NoError(t, err)
		require.Empty(t, gone, "replaced by a refresh")
		field, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id + '=' + document.activeElement.value`))
		require.NoError(t, err)
		require.Equal(t, "move-to=typed", field, "what is being typed keeps its field and focus")
	})

	t.Run("JobPageShowsStatsAndBodyAsJSON", func(t *testing.T) {
		w := startWorld(t, console.Options{Backend: "memory"})
		ids := w.put("orders", 1, func(int) string { return `{"order":42,"items":[1,2]}` })
		ctx := tab(t, b, nil)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/ui/#/job/%d", w.url, ids[0])),
			cellIs("#job-stats .state", "ready"), cellIs("#job-stats .tube", "orders"),
			chromedp.SetValue("#preview-mode", "json"),
			until(`document.querySelector('#preview-mode').dispatchEvent(new Event('change')) || true`),
			until(`document.querySelector('#job-body').textContent.includes('"order": 42')`)))
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#job-body').textContent`))
		require.NoError(t, err)
		require.Contains(t, text, "\"items\": [\n")
	})

	// Read-only, or no authentication configured: the pages show the actions as unavailable and
	// say why, and the API refuses them even to a page that sends the token and Origin.
	t.Run("ActionsOffAreShownAndRefused", func(t *testing.T) {
		auth, header := basicAuth(t)
		tests := []struct {
			name    string
			opts    console.Options
			headers map[string]any
			why     string
		}{
			{"NoAuthConfigured", console.Options{}, nil, "no authentication is configured"},
			{"ReadOnly", console.Options{ReadOnly: true, Auth: auth}, map[string]any{"Authorization": header}, "the console is read-only"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.opts.Backend = "memory"
				w := startWorld(t, tt.opts)
				ids := w.put("ro", 2, func(int) string { return "x" })
				ctx := tab(t, b, tt.headers)
				require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/ro"),
					until(`document.querySelectorAll('#jobs tbody tr').length === 2`),
					until(fmt.Sprintf(`document.querySelector('#actions-off').textContent.includes(%q)`, tt.why)),
					cellIs("#mode", "actions off")))
				buttons, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#kick, #flush, #move, #put, .delete-job, .kick-job').length`))
				require.NoError(t, err)
				require.Zero(t, buttons)
				require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/ui/#/job/%d", w.url, ids[0])),
					cellIs("#job-stats .state", "ready"),
					until(fmt.Sprintf(`(document.querySelector('#actions-off')||{textContent: ''}).textContent.includes(%q)`, tt.why))))
				buttons, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#job-kick, #job-delete').length`))
				require.NoError(t, err)
				require.Zero(t, buttons)
				status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(async () => {
					const info = await (await fetch('/api/info')).json();
					const r = await fetch('/api/flush', {method: 'POST', headers: {'X-CSRF-Token': info.csrf}, body: '{"tube":"ro"}'});
					return r.status; })()`, chromedp.EvalAwaitPromise))
				require.NoError(t, err)
				require.Equal(t, http.StatusForbidden, status)
				require.Equal(t, "2", w.tubeStat("ro", "current-jobs-ready"))
			})
		}
	})

	t.Run("HeaderNamesStoreGatewayAndVersion", func(t *testing.T) {
		w := startWorld(t, console.Options{Backend: "redis", Namespace: "prefix jobs", Store: "redis://cache:6379/0",
			Gateway: "0123abcd", Version: "v1.2.3"})
		ctx := tab(t, b, nil)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"),
			cellIs("#store", "redis · prefix jobs"), cellIs("#gateway", "gateway 0123abcd"), cellIs("#version", "beangate v1.2.3"),
			until(`document.querySelector('#store').title === "redis://cache:6379/0"`)))
	})

	// The header's field opens a job by id, from any page; an id with no job says so on the page.
	t.Run("FindJobByID", func(t *testing.T) {
		w := startWorld(t, console.Options{Backend: "memory"})
		ids := w.put("find", 3, func(i int) string { return fmt.Sprint("job ", i) })
		tests := []struct {
			name, id, want string // want: the job page's id cell, or the notice
		}{
			{"Exists", fmt.Sprint(ids[1]), fmt.Sprint(ids[1])},
			{"Missing", "999999", "No job 999999: it was deleted, or never existed."},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := tab(t, b, nil)
				selector := "#job-stats .id"
				if tt.name == "Missing" {
					selector = "#job-missing"
				}
				require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/find"), cellIs("#tube-name", "find"),
					chromedp.SetValue("#find-id", tt.id), chromedp.Click("#find button"),
					cellIs(selector, tt.want)))
			})
		}
	})

	// A reserved job's page: its age as the list shows it (the exact seconds in a tooltip) and
	// the connection and gateway holding it.
	t.Run("JobPageShowsAgeAndHolder", func(t *testing.T) {
		w := startWorld(t, console.Options{Backend: "memory"})
		ids := w.put("held", 1, func(int) string { return "x" })
		c := w.conn()
		id, _, err := beanstalk.NewTubeSet(c, "held").Reserve(time.Second)
		require.NoError(t, err)
		require.Equal(t, ids[0], id)
		ctx := tab(t, b, nil)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/ui/#/job/%d", w.url, id)),
			cellIs("#job-stats .state", "reserved"),
			until(`/^\d+(\.\d)?[smh]$/.test(document.querySelector('#job-stats .age').textContent)`),
			until(`/^\d+(\.\d+)? s$/.test(document.querySelector('#job-stats .age').title)`),
			until(`/^\d+(\.\d)?[smh]$/.test(document.querySelector('#job-stats .ttr').textContent)`),
			until(fmt.Sprintf(`document.querySelector('#job-stats .holder').textContent.startsWith('connection %s.') &&
				document.querySelector('#job-stats .holder').textContent.endsWith(' on gateway %s (this gateway)')`, w.gateway, w.gateway))))
	})

	// A job's page tells its story: put, reserved by a worker whose TTR ran out, reserved by
	// another that buried it, each connection with its address.
	t.Run("JobPageShowsTheJobsHistory", func(t *testing.T) {
		auth, header := basicAuth(t) // actions on, as the docs' picture shows the page
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		require.NoError(t, w.store.SetPolicy(context.Background(), backend.Policy{Tube: "story", History: true}))
		dial := func() (*beanstalk.Conn, string) {
			nc, err := net.Dial("tcp", w.addr)
			require.NoError(t, err)
			c := beanstalk.NewConn(nc)
			t.Cleanup(func() { _ = c.Close() })
			return c, nc.LocalAddr().String()
		}
		producer, producerAddr := dial()
		id, err := beanstalk.NewTube(producer, "story").Put([]byte(`{"invoice":7}`), 0, 0, time.Second)
		require.NoError(t, err)
		first, firstAddr := dial()
		got, _, err := beanstalk.NewTubeSet(first, "story").Reserve(time.Second)
		require.NoError(t, err)
		require.Equal(t, id, got)
		second, secondAddr := dial()
		got, _, err = beanstalk.NewTubeSet(second, "story").Reserve(5 * time.Second) // after the first's TTR
		require.NoError(t, err)
		require.Equal(t, id, got)
		require.NoError(t, second.Bury(id, 0))

		ctx := tab(t, b, map[string]any{"Authorization": header})
		rows := `document.querySelectorAll('#job-history tbody tr')`
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/ui/#/job/%d", w.url, id)),
			cellIs("#job-stats .state", "buried"), until(rows+`.length === 5`)))
		cells, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](`[...`+rows+`].map(tr =>
			['kind', 'addr', 'detail', 'session'].map(c => tr.querySelector('.' + c).textContent))`))
		require.NoError(t, err)
		want := [][]string{{"put", producerAddr, ""}, {"reserved", firstAddr, ""}, {"timed-out", firstAddr, ""},
			{"reserved", secondAddr, ""}, {"buried", secondAddr, "by the worker"}}
		for i := range want {
			require.Equal(t, want[i], cells[i][:3], "row %d", i)
			require.True(t, strings.HasPrefix(cells[i][3], w.gateway+"."), "row %d names a connection of this gateway: %q", i, cells[i][3])
		}
		require.Equal(t, cells[1][3], cells[2][3], "the timeout names the first holder")
		hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#job-no-history').hidden`))
		require.NoError(t, err)
		require.True(t, hidden)
		screenshot(t, ctx, "console-job")

		// A job of a tube that keeps no history says so.
		plain := w.put("plain", 1, func(int) string { return "x" })
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/ui/#/job/%d", w.url, plain[0])),
			cellIs("#job-stats .tube", "plain"), until(`!document.querySelector('#job-no-history').hidden`),
			until(`document.querySelector('#job-history').hidden`)))
	})

	// Charts have a value axis and a time axis in clock time; one without samples says so
	// instead of inventing a scale.
	t.Run("ChartsHaveAxesAndSayNoDataYet", func(t *testing.T) {
		w := startWorld(t, console.Options{Backend: "memory"})
		w.put("charted", 1, func(int) string { return "x" })
		ctx := tab(t, b, nil)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/#/tube/charted"), cellIs("#tube-name", "charted")))
		tests := []struct {
			name   string
			values string
			want   string // title, y-top, x-start, x-end, whether "no data yet" shows
		}{
			{"Empty", "[]", "ready · no data yet||||true"},
			{"OneSample", "[3]", "ready · no data yet||||true"},
			{"ThreeSeconds", "[0, 2, 4]", "ready · now 4 · max 4 · last 3s|4|10:00:00|10:00:02|false"},
			{"AllZero", "[0, 0]", "ready · now 0 · max 0 · last 2s|0|10:00:01|10:00:02|false"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
					const n = chartNode('ready');
					document.body.append(n);
					updateChart(n, 'ready', %s, new Date(2026, 0, 1, 10, 0, 2));
					const q = s => n.querySelector(s).textContent;
					const out = [q('.title'), q('.y-top'), q('.x-start'), q('.x-end'), getComputedStyle(n.querySelector('.empty')).display !== 'none'].join('|');
					n.remove();
					return out; })()`, tt.values)))
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
			})
		}
	})

	// Opened as http://user:password@host/ui/, the page's address carries the credentials, and
	// fetch refuses any URL that does: the API calls must still go through, reads and actions.
	t.Run("CredentialsInTheAddress", func(t *testing.T) {
		auth, _ := basicAuth(t)
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		w.put("inbox", 2, func(int) string { return "x" })
		withCredentials := strings.Replace(w.url, "http://", "http://admin:s3cret@", 1)
		require.NotEqual(t, w.url, withCredentials)
		ctx := tab(t, b, nil)
		// says is what the page reports, for a failure to show.
		says := func() string {
			msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#msg').textContent`))
			return msg
		}
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(withCredentials+"/ui/"),
			cellIs(`tr[data-tube="inbox"] .ready`, "2")), "the page says: %s", says())
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(withCredentials+"/ui/#/tube/inbox"),
			cellIs("#tube-name", "inbox"), chromedp.WaitVisible("#put"),
			chromedp.SetValue("#put-body", "put through a credentials URL"), chromedp.Click("#put"),
			until(`document.querySelector('#msg').textContent.startsWith('put: done')`)), "the page says: %s", says())
		require.Equal(t, "3", w.tubeStat("inbox", "current-jobs-ready"))
	})

	t.Run("AuthIsEnforced", func(t *testing.T) {
		auth, good := basicAuth(t)
		w := startWorld(t, console.Options{Backend: "memory", Auth: auth})
		w.put("secure", 1, func(int) string { return "x" })

		for _, path := range []string{"/ui/", "/ui/app.js", "/api/info", "/api/overview", "/api/jobs?tube=secure&state=ready"} {
			res, err := http.Get(w.url + path)
			require.NoError(t, err)
			_ = res.Body.Close()
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, path)
		}
		ctx := tab(t, b, nil)
		err := chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"))
		require.ErrorContains(t, err, "ERR_INVALID_AUTH_CREDENTIALS", "the browser gets the page without credentials")
		ctx = tab(t, b, map[string]any{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:wrong"))})
		err = chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"))
		require.ErrorContains(t, err, "ERR_INVALID_AUTH_CREDENTIALS", "the browser gets the page with a wrong password")

		ctx = tab(t, b, map[string]any{"Authorization": good})
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(w.url+"/ui/"),
			cellIs(`tr[data-tube="secure"] .ready`, "1")))
		title, err := chromedp.Run(ctx, chromedp.Title())
		require.NoError(t, err)
		require.Equal(t, "beangate console", title)

		// A cross-site request with the browser's credentials but no CSRF token is refused.
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(async () => {
			const r = await fetch('/api/flush', {method: 'POST', body: '{"tube":"secure"}'});
			return r.status; })()`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, status)
		require.Equal(t, "1", w.tubeStat("secure", "current-jobs-ready"))
	})
}
