package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestRandomSessionsAgainstRealBeanstalkd plays generated sessions, step by step, on a fresh
// real beanstalkd and on a fresh beangate (memory backend) and requires the same bytes back,
// after masking only what legitimately differs (see gatewaytest.NormaliseReply). Each seed is fixed, so a
// failure reproduces; the failure message names the seed, the step and the recent history.
//
// The generator avoids what cannot be compared deterministically: blocking reserves, short
// nonzero delays and pauses, reservations of jobs whose TTR can run out during the session, and
// the inputs where beangate deliberately follows 1.13 or fixes a beanstalkd bug (noted at each
// generator case that leaves them out).
func TestRandomSessionsAgainstRealBeanstalkd(t *testing.T) {
	bin := gatewaytest.DebianBeanstalkd(t)
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			const maxJobSize = 100 // small, so over-limit bodies are cheap to send
			real := gatewaytest.StartBeanstalkd(t, bin, maxJobSize)
			ours, _ := gatewaytest.StartServer(t, newMemory(t), gateway.Config{MaxJobSize: maxJobSize})
			playRandomSession(t, seed, 250, real, ours, maxJobSize)
		})
	}
}

// rstep is one generated step: bytes for one connection and how many replies they produce.
type rstep struct {
	conn    int
	send    string
	replies int
	quit    bool     // the step ends with quit: expect the server to close the connection
	id      uint64   // the job the step acts on, when it acts on one
	ids     []uint64 // job ids for the idMark placeholders in send, in order
	kind    string
	parts   []rstep // a pipelined step: the steps it sends in one write
}

// idMark stands for a job id in rstep.send, which differs between the servers (see idMap).
const idMark = "#ID#"

func (st rstep) render(mapID func(uint64) uint64) string {
	s := st.send
	for _, id := range st.ids {
		s = strings.Replace(s, idMark, strconv.FormatUint(mapID(id), 10), 1)
	}
	return s
}

func playRandomSession(t *testing.T, seed uint64, steps int, realAddr, oursAddr string, maxJobSize int) {
	g := newSessionGen(seed, maxJobSize)
	ids := newIDMap()
	real := map[int]*rconn{}
	ours := map[int]*rconn{}
	get := func(m map[int]*rconn, addr string, i int) *rconn {
		if m[i] == nil {
			m[i] = dialR(t, addr)
		}
		return m[i]
	}
	var history []string
	for n := range steps {
		st := g.next()
		realSend, oursSend := st.render(func(id uint64) uint64 { return id }), st.render(ids.toOurs)
		where := func() string {
			from := max(0, len(history)-12)
			return fmt.Sprintf("seed %d step %d (conn %d, %s) sent %q (to beangate %q)\nrecent steps:\n%s",
				seed, n, st.conn, st.kind, realSend, oursSend, strings.Join(history[from:], "\n"))
		}
		rc, oc := get(real, realAddr, st.conn), get(ours, oursAddr, st.conn)
		rc.send(t, realSend)
		want, err := rc.replies(st.replies)
		require.NoError(t, err, "beanstalkd did not give the replies the generator expects: %s", where())
		oc.send(t, oursSend)
		got, err := oc.replies(st.replies)
		require.NoError(t, err, "beangate: %s\nbeanstalkd answered %q", where(), want)
		for i := range want {
			checkSize(t, want[i])
			checkSize(t, got[i])
			require.NoError(t, ids.learn(want[i], got[i]), where())
			require.Equal(t, gatewaytest.NormaliseReply(want[i]), gatewaytest.NormaliseReply(ids.toReal(got[i])),
				"reply %d differs: %s\nbeanstalkd: %q\nbeangate:   %q", i, where(), want[i], got[i])
		}
		if st.quit {
			require.NoError(t, rc.closed(), "beanstalkd did not close: %s", where())
			require.NoError(t, oc.closed(), "beangate did not close: %s", where())
			delete(real, st.conn)
			delete(ours, st.conn)
		}
		g.observe(st, want)
		history = append(history, fmt.Sprintf("  %d conn %d %q -> %q", n, st.conn, realSend, want))
	}
	for i := range real {
		require.Empty(t, real[i].quiet(), "seed %d conn %d: beanstalkd sent extra bytes", seed, i)
		require.Empty(t, ours[i].quiet(), "seed %d conn %d: beangate sent extra bytes", seed, i)
	}
}

// idMap pairs beanstalkd's job ids with beangate's. beanstalkd consumes an id for a put that
// ends in EXPECTED_CRLF (docs/protocol.md §2.1 step 9, §7 item 19); beangate deliberately assigns
// ids only to stored jobs (docs/compatibility.md, "Ids are not consumed by rejected puts"). So beangate's id
// must be beanstalkd's minus the ids consumed so far, and commands and replies are translated
// across; ids that were never inserted (0, 99999, 2^64-1) are the same on both.
type idMap struct {
	gaps   uint64
	ours   map[uint64]uint64 // beanstalkd id -> beangate id
	real   map[uint64]uint64 // the reverse
	idWord *regexp.Regexp
}

func newIDMap() *idMap {
	return &idMap{ours: map[uint64]uint64{}, real: map[uint64]uint64{},
		idWord: regexp.MustCompile(`\A(INSERTED |BURIED |RESERVED |FOUND |OK \d+\r\n---\nid: )(\d+)`)}
}

func (m *idMap) toOurs(id uint64) uint64 {
	if o, ok := m.ours[id]; ok {
		return o
	}
	return id
}

// learn pairs the ids of two INSERTED replies (and checks there is no gap in beangate's).
func (m *idMap) learn(want, got string) error {
	if want == "EXPECTED_CRLF\r\n" {
		m.gaps++
	}
	var r, o uint64
	if _, err := fmt.Sscanf(want, "INSERTED %d\r\n", &r); err != nil {
		return nil
	}
	if _, err := fmt.Sscanf(got, "INSERTED %d\r\n", &o); err != nil {
		return nil // the replies differ; the comparison reports it
	}
	if o != r-m.gaps {
		return fmt.Errorf("beangate inserted id %d where beanstalkd inserted %d after consuming %d ids", o, r, m.gaps)
	}
	m.ours[r], m.real[o] = o, r
	return nil
}

// toReal rewrites the job id a reply of beangate's carries into beanstalkd's.
func (m *idMap) toReal(reply string) string {
	loc := m.idWord.FindStringSubmatchIndex(reply)
	if loc == nil {
		return reply
	}
	o, err := strconv.ParseUint(reply[loc[4]:loc[5]], 10, 64)
	r, ok := m.real[o]
	if err != nil || !ok {
		return reply
	}
	return reply[:loc[4]] + strconv.FormatUint(r, 10) + reply[loc[5]:]
}

// rconn reads whole replies (a line, plus the body announced by RESERVED, FOUND and OK).
type rconn struct {
	c net.Conn
	r *bufio.Reader
}

func dialR(t *testing.T, addr string) *rconn {
	c, err := net.DialTimeout("tcp", addr, gatewaytest.ReplyTimeout)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &rconn{c: c, r: bufio.NewReader(c)}
}

func (c *rconn) send(t *testing.T, s string) {
	_, err := io.WriteString(c.c, s)
	require.NoError(t, err)
}

func (c *rconn) replies(n int) ([]string, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	var out []string
	for range n {
		line, err := c.r.ReadString('\n')
		for err == nil && !strings.HasSuffix(line, "\r\n") {
			var more string
			more, err = c.r.ReadString('\n')
			line += more
		}
		if err != nil {
			return out, fmt.Errorf("after %q: %q: %w", out, line, err)
		}
		f := strings.Fields(line)
		size := -1
		switch {
		case len(f) == 3 && (f[0] == "RESERVED" || f[0] == "FOUND"):
			size, _ = strconv.Atoi(f[2])
		case len(f) == 2 && f[0] == "OK":
			size, _ = strconv.Atoi(f[1])
		}
		if size >= 0 {
			body := make([]byte, size+2)
			if _, err := io.ReadFull(c.r, body); err != nil {
				return out, fmt.Errorf("after %q: body of %q: %w", out, line, err)
			}
			line += string(body)
		}
		out = append(out, line)
	}
	return out, nil
}

// closed requires EOF next, so whatever quit does to the conn's jobs is done before the next
// step (both servers release a conn's jobs before closing its socket).
func (c *rconn) closed() error {
	_ = c.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b, err := c.r.ReadByte()
	if err == nil {
		return fmt.Errorf("unexpected byte %q", b)
	}
	if err != io.EOF {
		return err
	}
	return nil
}

func (c *rconn) quiet() string {
	_ = c.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	b, _ := io.ReadAll(c.r)
	return string(b)
}

// checkSize requires the size an OK reply announces to be its payload's.
func checkSize(t *testing.T, reply string) {
	head, payload, _ := strings.Cut(reply, "\r\n")
	if n, ok := strings.CutPrefix(head, "OK "); ok {
		size, err := strconv.Atoi(n)
		require.NoError(t, err, "reply %q", reply)
		require.Equal(t, size+2, len(payload), "announced size in %q", reply)
	}
}

// sessionGen makes the steps. It learns job ids from beanstalkd's replies, so that commands
// mostly name jobs that exist, in states that make them interesting.
type sessionGen struct {
	r       *rand.Rand
	maxJob  int
	conns   int
	known   []uint64         // ids beanstalkd inserted
	short   map[uint64]bool  // jobs with TTR 0 or 1: never left reserved (see putShortTTR)
	held    map[int][]uint64 // jobs each conn got RESERVED
	tubes   []string         // valid names
	badName []string         // invalid names
}

func newSessionGen(seed uint64, maxJob int) *sessionGen {
	r := rand.New(rand.NewPCG(seed, 0x6265616e67617465))
	return &sessionGen{
		r: r, maxJob: maxJob, conns: 1 + r.IntN(3),
		short: map[uint64]bool{}, held: map[int][]uint64{},
		tubes: []string{"default", "default", "a", "b", "c", strings.Repeat("n", 200), "A-z0+9/;.$_()"},
		badName: []string{strings.Repeat("n", 201), "-x", "a*b", "a:b", "", "a b", "a ", " a",
			"a\tb", "\xc3\xa9"},
	}
}

func (g *sessionGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *sessionGen) u32() string {
	return g.pick([]string{"0", "1", "2", "1023", "1024", "4294967295", "007",
		strconv.Itoa(g.r.IntN(5000))})
}

// body is made of bytes that start no command, so that a body parsed as a command line (after
// a BAD_FORMAT put, or left over after EXPECTED_CRLF) can only be UNKNOWN_COMMAND.
func (g *sessionGen) body(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "xyz0123456789"[g.r.IntN(13)]
	}
	return string(b)
}

// jobID names a job beanstalkd inserted (mostly) or one that never existed.
func (g *sessionGen) jobID(allowShort bool) uint64 {
	var ids []uint64
	for _, id := range g.known {
		if allowShort || !g.short[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || g.r.IntN(8) == 0 {
		return []uint64{0, 99999, 18446744073709551615}[g.r.IntN(3)]
	}
	return ids[g.r.IntN(len(ids))]
}

// heldID prefers a job this conn holds, so release/bury/touch/delete often succeed.
func (g *sessionGen) heldID(conn int) uint64 {
	if h := g.held[conn]; len(h) > 0 && g.r.IntN(4) != 0 {
		return h[g.r.IntN(len(h))]
	}
	return g.jobID(true)
}

func (g *sessionGen) next() rstep {
	c := g.r.IntN(g.conns)
	if g.r.IntN(8) != 0 {
		return g.one(c)
	}
	// Pipelined: several commands (and bodies) in one write, replies in order.
	p := rstep{conn: c, kind: "pipelined"}
	for range 2 + g.r.IntN(4) {
		st := g.one(c)
		if st.quit {
			continue
		}
		p.send += st.send
		p.replies += st.replies
		p.ids = append(p.ids, st.ids...)
		p.parts = append(p.parts, st)
	}
	return p
}

func (g *sessionGen) one(c int) rstep {
	for {
		st := g.make(c)
		st.conn = c
		if !has225ByteLine(st.send) {
			return st
		}
	}
}

// has225ByteLine: beanstalkd swallows the command after a line of exactly 225 bytes and
// beangate deliberately does not (docs/protocol.md §1.3, §10), so no step sends one.
func has225ByteLine(s string) bool {
	for _, l := range strings.Split(s, "\r\n") {
		if len(l)+2 == 225 {
			return true
		}
	}
	return false
}

func (g *sessionGen) make(c int) rstep {
	one := func(kind, s string) rstep { return rstep{kind: kind, send: s + "\r\n", replies: 1} }
	onID := func(kind, s string, id uint64) rstep {
		return rstep{kind: kind, send: s + "\r\n", replies: 1, id: id, ids: []uint64{id}}
	}
	switch k := g.r.IntN(100); {
	case k < 16:
		return g.put()
	case k < 20:
		return g.badPut()
	case k < 23:
		return g.putShortTTR()
	case k < 28:
		return one("use", "use "+g.pick(g.tubes))
	case k < 32:
		return one("watch", "watch "+g.pick(g.tubes))
	case k < 35:
		return one("ignore", "ignore "+g.pick(append(slices.Clone(g.tubes), "nothere")))
	case k < 37:
		return one("bad name", g.pick([]string{"use ", "watch ", "ignore ", "stats-tube "})+g.pick(g.badName))
	case k < 43:
		// Only 0: 1.12 and 1.13 parse other arguments differently (docs/protocol.md §2.4, §0
		// change 2), and a nonzero timeout would wait. "0 1" is accepted by both.
		return one("reserve-with-timeout", g.pick([]string{"reserve-with-timeout 0", "reserve-with-timeout 0 1"}))
	case k < 47:
		id := g.jobID(false) // a short-TTR job must not stay reserved
		return onID("reserve-job", "reserve-job "+idMark, id)
	case k < 52:
		id := g.heldID(c)
		delay := g.pick([]string{"0", "0", "100", "4294967295"})
		return onID("release", "release "+idMark+" "+g.u32()+" "+delay, id)
	case k < 56:
		id := g.heldID(c)
		return onID("bury", "bury "+idMark+" "+g.u32(), id)
	case k < 60:
		id := g.heldID(c)
		return onID("delete", "delete "+idMark, id)
	case k < 62:
		return onID("touch", "touch "+idMark, g.heldID(c))
	case k < 65:
		return one("kick", "kick "+g.pick([]string{"0", "1", "2", "100", "-1", "+2", "3abc", "4294967296",
			"abc", " \t2", "18446744073709551616", "", "1 2"}))
	case k < 68:
		return onID("kick-job", "kick-job "+idMark, g.jobID(true))
	case k < 72:
		return onID("peek", g.pick([]string{"peek ", "peek 00", "peek  "})+idMark, g.jobID(true))
	case k < 77:
		return one("peek-*", g.pick([]string{"peek-ready", "peek-delayed", "peek-buried"}))
	case k < 80:
		return one("list", g.pick([]string{"list-tubes", "list-tube-used", "list-tubes-watched"}))
	case k < 83:
		name := g.pick(append(slices.Clone(g.tubes), "nothere", "-x", strings.Repeat("n", 201), "a*b", "a:b"))
		// Delays are 0 (unpause) or long, so no pause ends during the session.
		return one("pause-tube", g.pick([]string{"pause-tube ", "pause-tube  ", "pause-tube"})+name+
			g.pick([]string{" 0", " 0", " 1000", "   4294967295", "", " -1", " 4294967296", " 10x"}))
	case k < 87:
		return onID("stats-job", "stats-job "+idMark, g.jobID(true))
	case k < 90:
		return one("stats-tube", "stats-tube "+g.pick(append(slices.Clone(g.tubes), "nothere")))
	case k < 91:
		return one("stats", "stats")
	case k < 95:
		return one("bad command", g.pick([]string{
			"PUT 0 0 0 1", "foo", "", " ", "list", "peekx", "statsx", "reservex", "reserve ",
			"use", "watch", "delete", "delete ", "delete -1", "delete 1 ", "peek abc", "release 1 2",
			"release 1 2 3 4", "bury 1", "touch", "touch 18446744073709551616", "stats-job 1 2",
			"reserve-job", "reserve-job -1", "kick-job", "list-tubes ", "list-tube-usedX", "sta\x00ts",
			"peek 18446744073709551615", "stats-tube",
			// An LF alone ends no line (docs/protocol.md §1.2): one line, one BAD_FORMAT.
			"list-tube-used\nlist-tube-used", "stats\n", "use a\nb",
			"delete\t1", "release\t1 0 0", "kick\t1", "peek-ready\t", "pause-tube default\t0",
		}))
	case k < 97:
		// Over-long lines end in discard mode until the CRLF: one BAD_FORMAT. A 224-byte line
		// is parsed. 225 bytes is left out: beanstalkd swallows the next command there and
		// beangate deliberately does not (docs/protocol.md §1.3, §10).
		n := g.pick([]string{"222", "224", "230", "300", "1000"})
		l, _ := strconv.Atoi(n)
		return one("long line", g.pick([]string{"g", "use ", "put 0 0 10 "})+strings.Repeat("9", l-1))
	case k < 98:
		g.held[c] = nil // quit returns this conn's jobs
		return rstep{kind: "quit", send: g.pick([]string{"quit\r\n", "quit \r\n", "quitX\r\n"}), quit: true}
	default:
		return g.shortTTRDeadline()
	}
}

// put is a well-formed put (maybe with extra spaces), a body over the -z limit, or a body of
// the wrong length. Delays are 0 or long and the TTR is long, so nothing moves by itself.
func (g *sessionGen) put() rstep {
	pri, delay := g.u32(), g.pick([]string{"0", "0", "0", "100", "4294967295"})
	ttr := g.pick([]string{"100", "1000", "4294967295"})
	n := []int{0, 1, 5, 20, g.maxJob}[g.r.IntN(5)]
	sp := g.pick([]string{" ", " ", "  "})
	head := "put" + " " + pri + sp + delay + sp + ttr + sp + strconv.Itoa(n) + "\r\n"
	switch g.r.IntN(6) {
	case 0: // over the limit, maybe with trailing garbage: the body is read and thrown away
		n = g.maxJob + 1 + g.r.IntN(3)
		garbage := g.pick([]string{"", " ", " x"})
		return rstep{kind: "put too big", send: fmt.Sprintf("put %s 0 100 %d%s\r\n%s\r\n", pri, n, garbage, g.body(n)), replies: 1}
	case 1: // body longer by k: EXPECTED_CRLF, then the leftover is parsed as a line
		k := 1 + g.r.IntN(4)
		payload := g.body(n+k) + "\r\n"
		if k == 1 {
			payload += "\r\n" // the leftover lone LF would glue onto the next step's line
		}
		return rstep{kind: "put long body", send: head + payload, replies: 2}
	case 2: // body shorter by k, padded so the server's read ends inside the padding
		if n == 0 {
			n = 3
			head = fmt.Sprintf("put %s 0 100 3\r\n", pri)
		}
		m := g.r.IntN(n)
		payload := g.body(m) + "\r\n" + g.body(n-m) + "\r\n"
		return rstep{kind: "put short body", send: head + payload, replies: 2}
	case 3: // any bytes are fine inside a body of the right length
		if n >= 4 {
			b := []byte(g.body(n))
			copy(b[g.r.IntN(n-3):], "\r\n\x00")
			return rstep{kind: "put binary", send: head + string(b) + "\r\n", replies: 1}
		}
		fallthrough
	default:
		return rstep{kind: "put", send: head + g.body(n) + "\r\n", replies: 1}
	}
}

// badPut fails in its numbers: BAD_FORMAT without reading the body, which then gets its own
// UNKNOWN_COMMAND (docs/protocol.md §2.1 step 1).
func (g *sessionGen) badPut() rstep {
	args := g.pick([]string{"-1 0 10 1", "+1 0 10 1", "4294967296 0 10 1", "0 4294967296 10 1",
		"0 0 4294967296 1", "0 0 10 4294967296", "0 0 10", "0 0 10 1 ", "0 0 10 1 2", "0 0 10 1x",
		"0\t0 10 1", "a 0 10 1", "0 -5 10 1", "0 0 -1 1", "", "0 0 10 -1"})
	return rstep{kind: "bad put", send: "put " + args + "\r\nx\r\n", replies: 2}
}

// putShortTTR puts a TTR 0 or 1 job into tube ttr1, which no one watches; it is never
// reserved except by shortTTRDeadline, which deletes it at once, so no TTR runs out.
func (g *sessionGen) putShortTTR() rstep {
	return rstep{kind: "put short ttr", send: fmt.Sprintf("use ttr1\r\nput %s 0 %s 1\r\nx\r\n",
		g.u32(), g.pick([]string{"0", "1"})), replies: 2}
}

// shortTTRDeadline reserves a short-TTR job: it is in its safety margin at once, so a poll
// with nothing ready in the watched tubes answers DEADLINE_SOON (docs/protocol.md §3.5).
func (g *sessionGen) shortTTRDeadline() rstep {
	var ids []uint64
	for id := range g.short {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return g.putShortTTR()
	}
	slices.Sort(ids)
	id := ids[g.r.IntN(len(ids))]
	return rstep{kind: "deadline soon", id: id, ids: []uint64{id, id, id}, replies: 4,
		send: "reserve-job " + idMark + "\r\nreserve-with-timeout 0\r\nstats-job " + idMark + "\r\ndelete " + idMark + "\r\n"}
}

// observe learns from beanstalkd's replies to st.
func (g *sessionGen) observe(st rstep, replies []string) {
	if st.parts != nil {
		for _, p := range st.parts {
			g.observe(p, replies[:p.replies])
			replies = replies[p.replies:]
		}
		return
	}
	drop := func(id uint64) {
		g.held[st.conn] = slices.DeleteFunc(g.held[st.conn], func(x uint64) bool { return x == id })
	}
	for _, r := range replies {
		f := strings.Fields(r)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "INSERTED":
			id, _ := strconv.ParseUint(f[1], 10, 64)
			g.known = append(g.known, id)
			if st.kind == "put short ttr" {
				g.short[id] = true
			}
		case "RESERVED":
			id, _ := strconv.ParseUint(f[1], 10, 64)
			if !g.short[id] {
				g.held[st.conn] = append(g.held[st.conn], id)
			}
		case "RELEASED", "BURIED", "DELETED":
			drop(st.id)
			if f[0] == "DELETED" {
				delete(g.short, st.id)
			}
		}
	}
}
