package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"
)

// writeTable prints the run as a plain table: one block per metric, one row per server.
func writeTable(w io.Writer, res *runResult) error {
	o := res.Options
	fmt.Fprintf(w, "scenario %s: conns=%d pipeline=%d body=%d tubes=%d duration=%s jobs=%d rounds=%d",
		res.Scenario, o.Conns, o.Pipeline, o.Body, o.Tubes, o.Duration, o.Jobs, res.Rounds)
	if res.Scenario == "open-loop" {
		fmt.Fprintf(w, " rate=%d producers=%d warmup=%s handler=%s", o.Rate, o.Producers, o.Warmup, o.Handler)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tserver\tmedian\tmin\tmax\tratio")
	summaries := make([][]summaryRow, len(res.Servers))
	for i, s := range res.Servers {
		summaries[i] = s.Summary
	}
	for _, row := range uniqueByName(summaries, func(r summaryRow) string { return r.Name }) {
		label := row.Name + " (" + row.Unit + ")"
		if row.Lower {
			label += " ↓"
		}
		for _, s := range res.Servers {
			r, ok := summaryRowOf(s.Summary, row.Name)
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", label, s.Target.Name, formatValue(r.Median),
				formatValue(r.Min), formatValue(r.Max), formatRatio(r.Ratio))
			label = ""
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "-"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func formatRatio(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

// num is a float that encodes NaN (a figure that could not be measured) as JSON null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

type jsonMetric struct {
	Name  string `json:"name"`
	Unit  string `json:"unit"`
	Value num    `json:"value"`
}

type jsonSummary struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Lower  bool   `json:"lower_is_better"`
	Median num    `json:"median"`
	Min    num    `json:"min"`
	Max    num    `json:"max"`
	Ratio  num    `json:"ratio_to_first"`
}

type jsonServer struct {
	target
	Rounds  [][]jsonMetric `json:"rounds"`
	Summary []jsonSummary  `json:"summary"`
}

type jsonRun struct {
	Scenario string       `json:"scenario"`
	Options  options      `json:"options"`
	Rounds   int          `json:"rounds"`
	Started  time.Time    `json:"started"`
	Servers  []jsonServer `json:"servers"`
}

// writeJSON prints the run as one JSON document per line (one line per scenario run).
func writeJSON(w io.Writer, res *runResult) error {
	out := jsonRun{Scenario: res.Scenario, Options: res.Options, Rounds: res.Rounds, Started: res.Started}
	for _, s := range res.Servers {
		js := jsonServer{target: s.Target}
		for _, round := range s.Rounds {
			var ms []jsonMetric
			for _, m := range round {
				ms = append(ms, jsonMetric{m.Name, m.Unit, num(m.Value)})
			}
			js.Rounds = append(js.Rounds, ms)
		}
		for _, r := range s.Summary {
			js.Summary = append(js.Summary, jsonSummary{r.Name, r.Unit, r.Lower, num(r.Median), num(r.Min),
				num(r.Max), num(r.Ratio)})
		}
		out.Servers = append(out.Servers, js)
	}
	return json.NewEncoder(w).Encode(out)
}
