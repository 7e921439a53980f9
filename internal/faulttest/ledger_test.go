package faulttest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The ledger finds each kind of violation, and accepts what is explained.
func TestLedgerVerdicts(t *testing.T) {
	t.Parallel()
	const ttr = 3 * time.Second
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	put := func(l *Ledger, body string, id uint64, ms int) {
		l.PutSent(body, at(ms))
		l.PutAcked("gw1", body, id, at(ms+1))
	}
	cycle := func(l *Ledger, holder string, id uint64, body string, ms int) {
		l.Reserved(holder, "gw1", id, body, at(ms))
		l.DeleteSent(id)
		l.Deleted(holder, "gw1", id, at(ms), at(ms+1))
	}
	tests := []struct {
		name      string
		events    func(l *Ledger)
		violation string // "" when the verdict must be clean
		lost      int    // acknowledged changes lost within a permitted window
	}{
		{"Clean", func(l *Ledger) { put(l, "a", 1, 0); cycle(l, "w1", 1, "a", 10) }, "", 0},
		{"Lost", func(l *Ledger) { put(l, "a", 1, 0); put(l, "b", 2, 5); cycle(l, "w1", 1, "a", 10) }, "was lost", 0},
		{"LostWithinWindow", func(l *Ledger) {
			put(l, "a", 1, 0)
			put(l, "b", 2, 5)
			cycle(l, "w1", 1, "a", 10)
			l.AllowLoss(at(4), at(7))
		}, "", 1},
		{"BackAfterDelete", func(l *Ledger) {
			put(l, "a", 1, 0)
			cycle(l, "w1", 1, "a", 10)
			l.Reserved("w2", "gw1", 1, "a", at(20))
		}, "after its delete", 0},
		{"TwoHoldersAtOnce", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			cycle(l, "w2", 1, "a", 20)
		}, "while w1", 0},
		{"AfterTTR", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			cycle(l, "w2", 1, "a", 3010)
		}, "", 0},
		{"HolderDisconnected", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			l.Gone("w1", at(15))
			cycle(l, "w2", 1, "a", 20)
		}, "", 0},
		{"HolderDisconnectedAfterward", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			cycle(l, "w2", 1, "a", 20)
			l.Gone("w1", at(25))
		}, "while w1", 0},
		{"GatewayCutOff", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			l.CutOff("gw1", at(12), 6*time.Millisecond)
			cycle(l, "w2", 1, "a", 20)
		}, "", 0},
		{"GatewayCutOffWithinItsLease", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			l.CutOff("gw1", at(12), time.Second)
			cycle(l, "w2", 1, "a", 20)
		}, "while w1", 0},
		{"IDGoesBack", func(l *Ledger) {
			put(l, "a", 5, 0)
			put(l, "b", 4, 10)
			cycle(l, "w1", 5, "a", 20)
			cycle(l, "w1", 4, "b", 30)
		}, "not above id 5", 0},
		{"IDGoesBackAcrossGateways", func(l *Ledger) {
			put(l, "a", 5, 0)
			l.PutSent("b", at(10))
			l.PutAcked("gw2", "b", 4, at(11))
			cycle(l, "w1", 5, "a", 20)
			cycle(l, "w1", 4, "b", 30)
		}, "not above id 5", 0},
		{"IDBelowAnotherGatewaysPerGateway", func(l *Ledger) {
			l.IDsIncreasePerGateway()
			put(l, "a", 5, 0)
			l.PutSent("b", at(10))
			l.PutAcked("gw2", "b", 4, at(11))
			cycle(l, "w1", 5, "a", 20)
			cycle(l, "w1", 4, "b", 30)
		}, "", 0},
		{"IDGoesBackPerGateway", func(l *Ledger) {
			l.IDsIncreasePerGateway()
			put(l, "a", 5, 0)
			put(l, "b", 4, 10)
			cycle(l, "w1", 5, "a", 20)
			cycle(l, "w1", 4, "b", 30)
		}, "not above id 5", 0},
		{"IDReused", func(l *Ledger) {
			put(l, "a", 1, 0)
			put(l, "b", 1, 10)
			cycle(l, "w1", 1, "b", 20)
		}, "and again", 0},
		{"StaleHolderDeletes", func(l *Ledger) {
			put(l, "a", 1, 0)
			l.Reserved("w1", "gw1", 1, "a", at(10))
			l.Reserved("w2", "gw1", 1, "a", at(4000))
			l.Deleted("w1", "gw1", 1, at(4001), at(4002))
		}, "which w2 held", 0},
		{"UnackedPutAppliedAnyway", func(l *Ledger) {
			l.PutSent("a", at(0))
			l.Failed("gw1", at(0), at(5))
			cycle(l, "w1", 7, "a", 10)
		}, "", 0},
		{"UnknownBody", func(l *Ledger) { cycle(l, "w1", 7, "zzz", 10) }, "which no producer put", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := NewLedger(ttr)
			l.start = t0
			tt.events(l)
			v := l.Verdict()
			if tt.violation == "" {
				require.Empty(t, v.Violations)
			} else {
				require.NotEmpty(t, v.Violations)
				require.Contains(t, v.Violations[0], tt.violation)
			}
			require.Equal(t, tt.lost, v.LostInWindow)
		})
	}
}

// Recovery is measured from the fault to when every gateway acknowledged a put and a delete
// sent after it.
func TestLedgerRecovery(t *testing.T) {
	t.Parallel()
	l := NewLedger(time.Second)
	t0 := time.Now()
	l.faults = append(l.faults, fault{"kill", t0})
	l.PutSent("a", t0.Add(100*time.Millisecond))
	l.PutAcked("gw1", "a", 1, t0.Add(2*time.Second))
	l.Reserved("w", "gw1", 1, "a", t0.Add(2*time.Second))
	l.Deleted("w", "gw1", 1, t0.Add(2*time.Second), t0.Add(2500*time.Millisecond))
	require.Equal(t, 2500*time.Millisecond, l.Verdict().Recovery["kill"])
}
