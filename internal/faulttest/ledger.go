package faulttest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ledger records every reply a fleet's clients got, and checks at the end what the store must
// guarantee: no acknowledged job lost, none delivered after its acknowledged delete, no job
// given to a second worker while the first still held it unless its TTR had expired or the
// holder had died (its connection closed, or its gateway cut off from the store, which ends its
// sessions once its lease runs out), and job ids that never go back.
//
// A loss window (AllowLoss) names the acknowledgements a fault may lose by design (a failover
// to an asynchronous replica): those within it are counted in the verdict, not failed.
type Ledger struct {
	mu      sync.Mutex
	start   time.Time
	ttr     time.Duration
	jobs    map[uint64]*jobEntry
	byBody  map[string]*jobEntry // every put tried, acknowledged or not
	gone    map[string]time.Time // holder → when its connection was closed
	cutOff  map[string]cut       // gateway → when it was cut off from the store
	faults  []fault
	loss    []window
	replies []reply // acknowledged puts and deletes, and errors, for recovery times
	errs    []string
	acks    []idAck // acknowledged put ids in acknowledgement order

	idsPerGateway bool // ids increase per gateway only (IDsIncreasePerGateway)
}

type jobEntry struct {
	body       string
	id         uint64
	sent       time.Time // the put was sent
	acked      time.Time // zero: no INSERTED seen (failed, timed out, connection lost)
	gateway    string
	deliveries []delivery
	deleted    time.Time // acknowledged delete
	deleteTry  bool      // a delete was sent, whatever came back
}

type delivery struct {
	holder, gateway string
	at              time.Time
}

type fault struct {
	name string
	at   time.Time
}

type window struct{ from, to time.Time }

type reply struct {
	gateway, kind string // kind: put, delete, error
	sent, at      time.Time
}

type idAck struct {
	id        uint64
	gateway   string
	sent, ack time.Time
}

// NewLedger starts a ledger for jobs put with the given TTR.
func NewLedger(ttr time.Duration) *Ledger {
	return &Ledger{start: time.Now(), ttr: ttr, jobs: map[uint64]*jobEntry{}, byBody: map[string]*jobEntry{},
		gone: map[string]time.Time{}, cutOff: map[string]cut{}}
}

// Fault marks the moment a fault named name was injected; recovery is measured from it.
func (l *Ledger) Fault(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults = append(l.faults, fault{name, time.Now()})
}

// AllowLoss says that acknowledgements between from and to may be lost (asynchronous
// replication at a failover): puts, reserves and deletes acknowledged then may be forgotten.
func (l *Ledger) AllowLoss(from, to time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loss = append(l.loss, window{from, to})
}

func (l *Ledger) mayLose(t time.Time) bool {
	for _, w := range l.loss {
		if !t.Before(w.from) && !t.After(w.to) {
			return true
		}
	}
	return false
}

type cut struct {
	at    time.Time
	lease time.Duration
}

// CutOff records that gateway was cut off from the store at: its sessions may be ended by the
// other gateways once its lease has run out, so its workers' jobs may go to others from then
// on. Its last renewal came at most a third of the lease before the cut.
func (l *Ledger) CutOff(gateway string, at time.Time, lease time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cutOff[gateway] = cut{at, lease}
}

// IDsIncreasePerGateway weakens the ids' check to what a store promises whose ids increase in
// the order each gateway acknowledges its puts, with no order between gateways (the spread
// layout of a Redis Cluster): a put sent after another was acknowledged through the same
// gateway gets a greater id.
func (l *Ledger) IDsIncreasePerGateway() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idsPerGateway = true
}

// PutSent records a put of body about to be sent.
func (l *Ledger) PutSent(body string, sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byBody[body] = &jobEntry{body: body, sent: sent}
}

// PutAcked records INSERTED id for body.
func (l *Ledger) PutAcked(gateway, body string, id uint64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j := l.byBody[body]
	j.id, j.acked, j.gateway = id, at, gateway
	if prev := l.jobs[id]; prev != nil && prev != j {
		l.errs = append(l.errs, fmt.Sprintf("id %d given to %q (put %v) and again to %q (put %v)",
			id, prev.body, l.rel(prev.acked), body, l.rel(at)))
	}
	l.jobs[id] = j
	l.acks = append(l.acks, idAck{id, gateway, j.sent, at})
	l.replies = append(l.replies, reply{gateway, "put", j.sent, at})
}

// Failed records an error reply (INTERNAL_ERROR, OUT_OF_MEMORY) or a broken connection for a
// command sent at sent.
func (l *Ledger) Failed(gateway string, sent, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.replies = append(l.replies, reply{gateway, "error", sent, at})
}

// Reserved records RESERVED id body for holder through gateway.
func (l *Ledger) Reserved(holder, gateway string, id uint64, body string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j := l.jobs[id]
	if j == nil {
		j = l.byBody[body]
		if j == nil {
			l.errs = append(l.errs, fmt.Sprintf("%s reserved job %d with body %q, which no producer put", holder, id, body))
			return
		}
		if !j.acked.IsZero() {
			l.errs = append(l.errs, fmt.Sprintf("%s reserved job %d with body %q, which was put as job %d", holder, id, body, j.id))
			return
		}
		j.id = id // a put whose reply was lost, or an error, was applied after all
		l.jobs[id] = j
	} else if j.body != body {
		l.errs = append(l.errs, fmt.Sprintf("%s reserved job %d with body %q; it was put with %q", holder, id, body, j.body))
		return
	}
	j.deliveries = append(j.deliveries, delivery{holder, gateway, at})
}

// DeleteSent records that holder sent delete id.
func (l *Ledger) DeleteSent(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if j := l.jobs[id]; j != nil {
		j.deleteTry = true
	}
}

// Deleted records DELETED for id, sent by holder at sent.
func (l *Ledger) Deleted(holder, gateway string, id uint64, sent, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j := l.jobs[id]
	if j == nil {
		l.errs = append(l.errs, fmt.Sprintf("%s deleted job %d, which no reserve gave out", holder, id))
		return
	}
	if n := len(j.deliveries); n == 0 || j.deliveries[n-1].holder != holder {
		last := "nobody"
		if n > 0 {
			last = j.deliveries[n-1].holder
		}
		if !l.mayLose(j.deliveries[max(n-1, 0)].at) {
			l.errs = append(l.errs, fmt.Sprintf("%s deleted job %d at %v, which %s held", holder, id, l.rel(at), last))
		}
	}
	if j.deleted.IsZero() {
		j.deleted = at
	}
	l.replies = append(l.replies, reply{gateway, "delete", sent, at})
}

// Gone records that holder's connection was closed at: its reservations may go to others.
func (l *Ledger) Gone(holder string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.gone[holder]; !ok {
		l.gone[holder] = at
	}
}

func (l *Ledger) rel(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Sub(l.start).Round(time.Millisecond).String()
}

// Verdict is what Check found.
type Verdict struct {
	Puts, PutsUnacked, PutsAppliedAnyway int
	Deliveries, Redeliveries             int
	Explained                            map[string]int // redeliveries by reason
	Deletes                              int
	LostInWindow                         int // acknowledged changes a permitted loss window lost
	Violations                           []string
	Recovery                             map[string]time.Duration // per fault: until every gateway acknowledged a put and a delete again
	Errors                               map[string]ErrorStats    // per gateway: failed replies
}

// ErrorStats are a gateway's failed commands: how many, and the longest wait for one.
type ErrorStats struct {
	Count   int
	Slowest time.Duration
}

func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "puts acknowledged %d (unacknowledged %d, of which applied %d); deliveries %d, repeated %d %v; deletes %d",
		v.Puts, v.PutsUnacked, v.PutsAppliedAnyway, v.Deliveries, v.Redeliveries, v.Explained, v.Deletes)
	if v.LostInWindow > 0 {
		fmt.Fprintf(&b, "; lost within the permitted window %d", v.LostInWindow)
	}
	names := make([]string, 0, len(v.Recovery))
	for n := range v.Recovery {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "; recovery after %s: %v", n, v.Recovery[n].Round(time.Millisecond))
	}
	for gw, e := range v.Errors {
		fmt.Fprintf(&b, "; %s failed %d commands (slowest answer %v)", gw, e.Count, e.Slowest.Round(time.Millisecond))
	}
	if len(v.Violations) == 0 {
		b.WriteString("; verdict: nothing acknowledged lost, no job back after its delete, every repeated delivery explained")
	} else {
		fmt.Fprintf(&b, "; %d VIOLATIONS", len(v.Violations))
	}
	return b.String()
}

// Verdict checks the ledger. Call it once every job has been drained (Load.Drain).
func (l *Ledger) Verdict() Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := Verdict{Explained: map[string]int{}, Recovery: map[string]time.Duration{}, Errors: map[string]ErrorStats{}}
	v.Violations = append(v.Violations, l.errs...)
	bodies := slices.Sorted(func(yield func(string) bool) {
		for b := range l.byBody {
			if !yield(b) {
				return
			}
		}
	})
	for _, body := range bodies {
		j := l.byBody[body]
		switch {
		case !j.acked.IsZero():
			v.Puts++
		case j.id != 0:
			v.PutsUnacked++
			v.PutsAppliedAnyway++
		default:
			v.PutsUnacked++
		}
		if j.id == 0 {
			continue
		}
		v.Deliveries += len(j.deliveries)
		if !j.deleted.IsZero() {
			v.Deletes++
		}
		for i, d := range j.deliveries {
			if !j.deleted.IsZero() && d.at.After(j.deleted) {
				if l.mayLose(j.deleted) {
					v.LostInWindow++
				} else {
					v.Violations = append(v.Violations, fmt.Sprintf("job %d delivered to %s at %v after its delete was acknowledged at %v",
						j.id, d.holder, l.rel(d.at), l.rel(j.deleted)))
				}
			}
			if i == 0 {
				continue
			}
			v.Redeliveries++
			p := j.deliveries[i-1]
			reason := l.explain(p, d)
			if reason == "" {
				v.Violations = append(v.Violations, fmt.Sprintf("job %d delivered to %s at %v while %s (through %s) held it since %v, TTR %v",
					j.id, d.holder, l.rel(d.at), p.holder, p.gateway, l.rel(p.at), l.ttr))
				continue
			}
			if reason == "lost in the failover window" {
				v.LostInWindow++
			}
			v.Explained[reason]++
		}
		if j.deleted.IsZero() && !j.acked.IsZero() && !j.deleteTry {
			if l.mayLose(j.acked) {
				v.LostInWindow++
			} else {
				v.Violations = append(v.Violations, fmt.Sprintf("job %d (%q, put through %s at %v) was lost: never deleted, not found at the end",
					j.id, j.body, j.gateway, l.rel(j.acked)))
			}
		}
	}
	// Ids never go back: a put sent after another was acknowledged gets a greater id (through
	// the same gateway only, with IDsIncreasePerGateway).
	groups := map[string][]idAck{"": l.acks}
	if l.idsPerGateway {
		groups = map[string][]idAck{}
		for _, a := range l.acks {
			groups[a.gateway] = append(groups[a.gateway], a)
		}
	}
	for _, g := range groups {
		l.checkIDOrder(&v, g)
	}
	for _, f := range l.faults {
		v.Recovery[f.name] = l.recovery(f.at)
	}
	for _, r := range l.replies {
		if r.kind == "error" {
			e := v.Errors[r.gateway]
			e.Count++
			e.Slowest = max(e.Slowest, r.at.Sub(r.sent))
			v.Errors[r.gateway] = e
		}
	}
	return v
}

// checkIDOrder adds to v a violation for every put in g sent after a put of g with a greater
// or equal id was acknowledged.
func (l *Ledger) checkIDOrder(v *Verdict, g []idAck) {
	acks := slices.Clone(g)
	sort.Slice(acks, func(i, k int) bool { return acks[i].ack.Before(acks[k].ack) })
	var maxAcked idAck
	bySent := slices.Clone(g)
	sort.Slice(bySent, func(i, k int) bool { return bySent[i].sent.Before(bySent[k].sent) })
	k := 0
	for _, a := range bySent {
		for k < len(acks) && acks[k].ack.Before(a.sent) {
			if acks[k].id > maxAcked.id {
				maxAcked = acks[k]
			}
			k++
		}
		if a.id <= maxAcked.id {
			if l.mayLose(maxAcked.ack) {
				v.LostInWindow++
			} else {
				v.Violations = append(v.Violations, fmt.Sprintf("put sent at %v got id %d, not above id %d acknowledged at %v",
					l.rel(a.sent), a.id, maxAcked.id, l.rel(maxAcked.ack)))
			}
		}
	}
}

// explain says why d could follow p for one job, or "" when nothing does.
func (l *Ledger) explain(p, d delivery) string {
	if g, ok := l.gone[p.holder]; ok && !g.After(d.at) {
		return "holder disconnected"
	}
	// The store reserved the job before p's reply came back: its TTR ran from then.
	if d.at.Sub(p.at) >= l.ttr-200*time.Millisecond {
		return "TTR expired"
	}
	if c, ok := l.cutOff[p.gateway]; ok && !c.at.Add(c.lease*2/3).After(d.at) {
		return "holder's gateway cut off, its lease expired"
	}
	if l.mayLose(p.at) {
		return "lost in the failover window"
	}
	return ""
}

// recovery is how long after at every gateway that acknowledged anything after it had
// acknowledged both a put and a delete sent after it.
func (l *Ledger) recovery(at time.Time) time.Duration {
	first := map[string]map[string]time.Time{}
	for _, r := range l.replies {
		if r.kind == "error" || r.sent.Before(at) {
			continue
		}
		if first[r.gateway] == nil {
			first[r.gateway] = map[string]time.Time{}
		}
		if t, ok := first[r.gateway][r.kind]; !ok || r.at.Before(t) {
			first[r.gateway][r.kind] = r.at
		}
	}
	var worst time.Duration
	for _, kinds := range first {
		for _, kind := range []string{"put", "delete"} {
			t, ok := kinds[kind]
			if !ok {
				return -1
			}
			worst = max(worst, t.Sub(at))
		}
	}
	return worst
}

// DeliveredAgain is when job id was first delivered after its delivery to holder, if it was.
func (l *Ledger) DeliveredAgain(id uint64, holder string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j := l.jobs[id]
	if j == nil {
		return time.Time{}, false
	}
	for i, d := range j.deliveries {
		if d.holder == holder && i+1 < len(j.deliveries) {
			return j.deliveries[i+1].at, true
		}
	}
	return time.Time{}, false
}

// FirstPutAfter is when the first put sent through gateway at or after t was acknowledged.
func (l *Ledger) FirstPutAfter(gateway string, t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, r := range l.replies {
		if r.kind == "put" && r.gateway == gateway && !r.sent.Before(t) && (first.IsZero() || r.at.Before(first)) {
			first = r.at
		}
	}
	return first, !first.IsZero()
}

// SlowestFailure is the longest a failed command sent through gateway between from and to
// waited for its answer, and how many there were.
func (l *Ledger) SlowestFailure(gateway string, from, to time.Time) (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var slowest time.Duration
	n := 0
	for _, r := range l.replies {
		if r.kind == "error" && r.gateway == gateway && !r.sent.Before(from) && r.sent.Before(to) {
			slowest = max(slowest, r.at.Sub(r.sent))
			n++
		}
	}
	return slowest, n
}

// Check logs the verdict and fails t on any violation.
func (l *Ledger) Check(t testing.TB) Verdict {
	t.Helper()
	v := l.Verdict()
	t.Logf("ledger: %s", v)
	for i, s := range v.Violations {
		if i == 20 {
			t.Errorf("... and %d more", len(v.Violations)-20)
			break
		}
		t.Errorf("ledger: %s", s)
	}
	if v.Puts == 0 || v.Deletes == 0 {
		t.Errorf("ledger: nothing was acknowledged (%d puts, %d deletes): the load did not run", v.Puts, v.Deletes)
	}
	return v
}
