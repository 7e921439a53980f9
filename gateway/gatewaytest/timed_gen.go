package gatewaytest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// timedAction is one step of a timed session: a command for one connection, a close, or a pause
// in the session.
type timedAction struct {
	conn     int
	kind     string
	line     string   // the command line; jobMark stands for each of ids
	ids      []uint64 // beanstalkd's ids of the jobs the line names
	body     *string  // put's body
	ttr      time.Duration
	delay    time.Duration // put's or release's delay, pause-tube's pause
	timeout  time.Duration // a waiting reserve's timeout; negative: none
	blocking bool          // the reply may take a while: collected in the background
	readies  bool          // it may make a job ready at once (so hand it to a waiting reserve)
	close    bool          // close the connection without a word
	sleep    time.Duration // let time pass
}

const jobMark = "#JOB#"

func (a timedAction) render(id func(uint64) string) string {
	s := a.line
	for _, x := range a.ids {
		s = strings.Replace(s, jobMark, id(x), 1)
	}
	return s
}

// wire is what is sent, with ids as mapID gives them.
func (a timedAction) wire(mapID func(uint64) uint64) string {
	s := a.render(func(x uint64) string { return strconv.FormatUint(mapID(x), 10) }) + "\r\n"
	if a.body != nil {
		s += *a.body + "\r\n"
	}
	return s
}

// show is the action for the log, with jobs named as jN.
func (a timedAction) show() string {
	s := a.render(func(x uint64) string { return "j" + strconv.FormatUint(x, 10) })
	if a.body != nil {
		s += " " + quote(*a.body)
	}
	return s
}

// timedGen makes a timed session's actions. It learns from beanstalkd's replies which jobs exist
// and which each connection holds, so that commands mostly name jobs in interesting states.
type timedGen struct {
	r     *rand.Rand
	steps int
	conns int
	tubes []string
	ttrs  map[uint64]time.Duration // jobs beanstalkd inserted, with their TTR
	known []uint64
	held  map[int][]uint64
	used  map[int]string
	fresh int // tubes made up so far
}

func newTimedGen(seed uint64) *timedGen {
	r := rand.New(rand.NewPCG(seed, 0x74696d6564))
	prefix := fmt.Sprintf("td%d", seed)
	return &timedGen{r: r, steps: 25 + r.IntN(15), conns: 1 + r.IntN(3),
		tubes: []string{prefix + ".a", prefix + ".b", prefix + ".c"},
		ttrs:  map[uint64]time.Duration{}, held: map[int][]uint64{}, used: map[int]string{}}
}

func (g *timedGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *timedGen) seconds(xs ...int) time.Duration {
	return time.Duration(xs[g.r.IntN(len(xs))]) * time.Second
}

func (g *timedGen) ttrOf(id uint64) time.Duration { return g.ttrs[id] }

func (g *timedGen) opened(i int) { g.used[i] = g.tubes[0] }

func (g *timedGen) closed(i int) { delete(g.held, i) }

// job names a job beanstalkd inserted (now and then one that never existed).
func (g *timedGen) job() uint64 {
	if len(g.known) == 0 || g.r.IntN(12) == 0 {
		return 999999
	}
	return g.known[g.r.IntN(len(g.known))]
}

// heldJob prefers a job connection i holds.
func (g *timedGen) heldJob(i int) uint64 {
	if h := g.held[i]; len(h) > 0 && g.r.IntN(5) != 0 {
		return h[g.r.IntN(len(h))]
	}
	return g.job()
}

func (g *timedGen) pri() string {
	return g.pick([]string{"0", "1", "3", "100", "1023", "1024", "4294967295", strconv.Itoa(g.r.IntN(2000))})
}

func (g *timedGen) body() string {
	switch g.r.IntN(8) {
	case 0:
		return ""
	case 1:
		b := make([]byte, 1+g.r.IntN(40))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return string(b) + "\r\n"
	case 2:
		return strings.Repeat("0123456789abcdef", 64+g.r.IntN(64))
	default:
		return fmt.Sprintf("job %d", g.r.IntN(1000))
	}
}

// next is the next action of session s.
func (g *timedGen) next(s *timedSession) timedAction {
	var free, waiting []int
	for i := range g.conns {
		if pc := s.conns[i]; pc == nil || pc.blocked == nil {
			free = append(free, i)
		} else {
			waiting = append(waiting, i)
		}
	}
	if len(waiting) > 0 && g.r.IntN(12) == 0 {
		// A client that goes away while its reserve waits: the waiter must go with it, and
		// no job may be handed to it.
		return timedAction{conn: waiting[g.r.IntN(len(waiting))], kind: "close", close: true}
	}
	if len(free) == 0 || g.r.IntN(10) == 0 {
		return timedAction{sleep: time.Duration(200+g.r.IntN(2000)) * time.Millisecond}
	}
	a := g.make(free[g.r.IntN(len(free))], s.anyBlocked())
	return a
}

func (g *timedGen) make(i int, otherWaits bool) timedAction {
	one := func(kind, line string, ids ...uint64) timedAction {
		return timedAction{conn: i, kind: kind, line: line, ids: ids}
	}
	switch k := g.r.IntN(100); {
	case k < 22:
		body := g.body()
		ttr, delay := g.seconds(1, 2, 3, 3, 5, 60), g.seconds(0, 0, 0, 1, 2)
		return timedAction{conn: i, kind: "put", body: &body, ttr: ttr, delay: delay, readies: delay == 0,
			line: fmt.Sprintf("put %s %d %d %d", g.pri(), delay/time.Second, ttr/time.Second, len(body))}
	case k < 34 || k < 42 && otherWaits:
		return one("reserve-with-timeout", "reserve-with-timeout 0")
	case k < 42:
		// At most one waiting reserve at a time: which of several is served is not defined.
		if g.r.IntN(5) == 0 {
			return timedAction{conn: i, kind: "reserve", line: "reserve", blocking: true, timeout: -1}
		}
		n := 1 + g.r.IntN(3)
		return timedAction{conn: i, kind: "reserve-with-timeout", line: fmt.Sprintf("reserve-with-timeout %d", n),
			blocking: true, timeout: time.Duration(n) * time.Second}
	case k < 45:
		return one("reserve-job", "reserve-job "+jobMark, g.job())
	case k < 53:
		a := one("release", "", g.heldJob(i))
		a.delay = g.seconds(0, 0, 1, 2)
		a.line = fmt.Sprintf("release %s %s %d", jobMark, g.pri(), a.delay/time.Second)
		a.readies = a.delay == 0
		return a
	case k < 57:
		return one("bury", "bury "+jobMark+" "+g.pri(), g.heldJob(i))
	case k < 64:
		return one("delete", "delete "+jobMark, g.heldJob(i))
	case k < 67:
		return one("touch", "touch "+jobMark, g.heldJob(i))
	case k < 71:
		a := one("kick", "kick "+g.pick([]string{"1", "2", "10"}))
		a.readies = true
		return a
	case k < 73:
		a := one("kick-job", "kick-job "+jobMark, g.job())
		a.readies = true
		return a
	case k < 78:
		return one("peek-state", g.pick([]string{"peek-ready", "peek-delayed", "peek-buried"}))
	case k < 80:
		return one("peek", "peek "+jobMark, g.job())
	case k < 86:
		return one("stats-job", "stats-job "+jobMark, g.job())
	case k < 89:
		return one("stats-tube", "stats-tube "+g.pick(g.tubes))
	case k < 92:
		a := one("pause-tube", "")
		a.delay = g.seconds(0, 1, 2)
		a.line = fmt.Sprintf("pause-tube %s %d", g.pick(g.tubes), a.delay/time.Second)
		a.readies = true // an unpause, or a shorter pause
		return a
	case k < 97:
		tube := g.pick(g.tubes)
		if g.r.IntN(2) == 0 {
			// A tube of its own for a moment: created here and dropped when the connection
			// moves on or closes, so stores collect tubes while other sessions use theirs.
			g.fresh++
			tube = fmt.Sprintf("%s.n%d", g.tubes[0], g.fresh)
		}
		return one("tubes", g.pick([]string{"use ", "watch ", "watch ", "ignore "})+tube)
	case k < 99:
		a := one("quit", "quit")
		a.readies = true
		return a
	default:
		return timedAction{conn: i, kind: "close", close: true}
	}
}

// offsets are the moments, from its sending, that a may set off: a delay or pause's end, a
// waiting reserve's timeout, the DEADLINE_SOON margin and deadline of a reservation it may make.
func (g *timedGen) offsets(a timedAction) []time.Duration {
	var out []time.Duration
	if a.delay > 0 {
		out = append(out, a.delay)
	}
	if a.timeout > 0 {
		out = append(out, a.timeout)
	}
	ttrs := func(ids ...uint64) {
		seen := map[time.Duration]bool{}
		for _, id := range ids {
			if ttr := g.ttrs[id]; ttr > 0 && !seen[ttr] {
				seen[ttr] = true
				out = append(out, ttr-time.Second, ttr)
			}
		}
	}
	switch a.kind {
	case "touch", "reserve-job":
		ttrs(a.ids...)
	case "reserve-with-timeout", "reserve":
		ttrs(g.known...) // any of them may be the one reserved
	}
	return out
}

// observe learns from beanstalkd's reply text to a on connection i.
func (g *timedGen) observe(i int, a timedAction, text string) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return
	}
	drop := func(id uint64) {
		g.held[i] = slices.DeleteFunc(g.held[i], func(x uint64) bool { return x == id })
	}
	switch f[0] {
	case "INSERTED":
		id, _ := strconv.ParseUint(f[1], 10, 64)
		g.known = append(g.known, id)
		g.ttrs[id] = a.ttr
	case "RESERVED":
		id, _ := strconv.ParseUint(f[1], 10, 64)
		if !slices.Contains(g.held[i], id) {
			g.held[i] = append(g.held[i], id)
		}
	case "RELEASED", "BURIED", "DELETED":
		drop(a.ids[0])
	case "USING":
		g.used[i] = f[1]
	}
}
