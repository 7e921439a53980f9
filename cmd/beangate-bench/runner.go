package main

import (
	"fmt"
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
// the median's ratio to the first server's.
func summarizeServers(servers []serverResult) {
	for i := range servers {
		s := &servers[i]
		if len(s.Rounds) == 0 {
			continue
		}
		for m, first := range s.Rounds[0] {
			values := make([]float64, 0, len(s.Rounds))
			for _, round := range s.Rounds {
				values = append(values, round[m].Value)
			}
			s.Summary = append(s.Summary, summaryRow{Name: first.Name, Unit: first.Unit, Lower: first.Lower,
				spread: summarize(values)})
		}
	}
	for i := range servers {
		for m := range servers[i].Summary {
			row := &servers[i].Summary[m]
			row.Ratio = ratio(row.Median, servers[0].Summary[m].Median)
		}
	}
}
