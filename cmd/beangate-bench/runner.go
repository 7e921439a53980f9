package main

import (
	"fmt"
	"math"
	"time"
)

// serverResult is everything measured for one server in a run.
type serverResult struct {
	Target  target
	Rounds  [][]metric
	Summary []summaryRow
}

// summaryRow is one metric of one server over all rounds, and its ratio to the first server.
type summaryRow struct {
	Name, Unit string
	Lower      bool
	spread
	Ratio float64
}

// runResult is one scenario compared across servers.
type runResult struct {
	Scenario string
	Options  options
	Rounds   int
	Started  time.Time
	Servers  []serverResult
}

// compare runs rounds alternately on every server (A, B, A, B, ...) so slow drift of a noisy
// machine hits all servers alike; any failed round ends the run with its error.
func compare(name string, s scenario, opts options, targets []target, rounds int, p *progress) (*runResult, error) {
	res := &runResult{Scenario: name, Options: opts, Rounds: rounds, Started: time.Now()}
	states := make([]*serverState, len(targets))
	for i, t := range targets {
		res.Servers = append(res.Servers, serverResult{Target: t})
		states[i] = &serverState{}
	}
	for i := range rounds {
		for j, t := range targets {
			r := newRound(opts, t, states[j])
			stopProgress := p.watch(fmt.Sprintf("[%s] round %d/%d %s", name, i+1, rounds, t.Name), r)
			var cost *costMeter
			if name != "conns" {
				cost = startCost(t)
			}
			metrics, err := runRound(s, r, name != "conns")
			if cost != nil {
				costs := cost.finish(r.ledger.jobs()) // also closes the store probe
				if err == nil {
					metrics = append(metrics, costs...)
				}
			}
			stopProgress(metrics)
			if err != nil {
				return res, err
			}
			res.Servers[j].Rounds = append(res.Servers[j].Rounds, metrics)
		}
	}
	summarizeServers(res.Servers)
	return res, nil
}

// summarizeServers fills each server's Summary: median, min and max over rounds per metric, and
// the median's ratio to the first server's. Metrics are matched by name: servers may report
// different ones (a Redis Cluster one share per master), and a round whose store could not be
// read lacks the store's.
func summarizeServers(servers []serverResult) {
	for i := range servers {
		s := &servers[i]
		for _, first := range uniqueByName(s.Rounds, func(m metric) string { return m.Name }) {
			values := make([]float64, 0, len(s.Rounds))
			for _, round := range s.Rounds {
				values = append(values, valueOf(round, first.Name))
			}
			s.Summary = append(s.Summary, summaryRow{Name: first.Name, Unit: first.Unit, Lower: first.Lower,
				spread: summarize(values)})
		}
	}
	for i := range servers {
		for m := range servers[i].Summary {
			row := &servers[i].Summary[m]
			row.Ratio = math.NaN()
			if base, ok := summaryRowOf(servers[0].Summary, row.Name); ok {
				row.Ratio = ratio(row.Median, base.Median)
			}
		}
	}
}

// uniqueByName is every item of the lists whose name is new, in the order names first appear.
func uniqueByName[T any](lists [][]T, name func(T) string) []T {
	var out []T
	seen := map[string]bool{}
	for _, list := range lists {
		for _, item := range list {
			if n := name(item); !seen[n] {
				seen[n] = true
				out = append(out, item)
			}
		}
	}
	return out
}

// valueOf is the named metric's value in a round, NaN when the round lacks it.
func valueOf(round []metric, name string) float64 {
	for _, m := range round {
		if m.Name == name {
			return m.Value
		}
	}
	return math.NaN()
}

func summaryRowOf(rows []summaryRow, name string) (summaryRow, bool) {
	for _, r := range rows {
		if r.Name == name {
			return r, true
		}
	}
	return summaryRow{}, false
}
