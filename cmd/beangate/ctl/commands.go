package ctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"

	"github.com/beangate/beangate/gateway/console"
	"github.com/beangate/beangate/internal/beanstalk"
)

func (o *options) json() bool { return o.output == "json" }

func (o *options) printJSON(v any) error {
	enc := json.NewEncoder(o.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// withConn runs fn on a protocol connection.
func (o *options) withConn(fn func(c *beanstalk.Conn) error) error {
	c, err := o.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

func parseID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, usageError{fmt.Errorf("%q is not a job id", s)}
	}
	return id, nil
}

func statsCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "stats", Short: "The server's stats", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return o.withConn(func(c *beanstalk.Conn) error {
				st, err := c.Stats()
				if err != nil {
					return err
				}
				if o.json() {
					return o.printJSON(typed(st))
				}
				for _, k := range sortedKeys(st) {
					fmt.Fprintf(o.stdout, "%s: %s\n", k, st[k])
				}
				return nil
			})
		},
	}
}

func printTubes(w io.Writer, rows []tubeRow, rates bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// TOTAL-JOBS is stats-tube's total-jobs: every job put into the tube since start, not a
	// current count.
	head := "TUBE\tREADY\tURGENT\tRESERVED\tDELAYED\tBURIED\tTOTAL-JOBS\tWATCHING\tWAITING\tPAUSED"
	if rates {
		head += "\tPUTS/S\tDELETES/S"
	}
	fmt.Fprintln(tw, head+"\t")
	for _, r := range rows {
		paused := "-"
		if r.PauseLeft > 0 {
			paused = fmt.Sprintf("%ds", r.PauseLeft)
		}
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s", r.Name, r.Ready, r.Urgent, r.Reserved,
			r.Delayed, r.Buried, r.Total, r.Watching, r.Waiting, paused)
		if rates {
			line += fmt.Sprintf("\t%.1f\t%.1f", r.PutsPerSec, r.DeletesPerSec)
		}
		fmt.Fprintln(tw, line+"\t")
	}
	_ = tw.Flush()
}

func tubesCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "tubes", Short: "Every tube's jobs by state, as a table", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return o.withConn(func(c *beanstalk.Conn) error {
				rows, err := readTubes(c)
				if err != nil {
					return err
				}
				if o.json() {
					return o.printJSON(rows)
				}
				printTubes(o.stdout, rows, false)
				return nil
			})
		},
	}
}

func topCmd(o *options) *cobra.Command {
	var (
		interval time.Duration
		count    int
	)
	cmd := &cobra.Command{
		Use: "top", Short: "A live view of the tubes: jobs, rates and waiting workers", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.withConn(func(c *beanstalk.Conn) error {
				prev := map[string]tubeRow{}
				last := time.Now()
				for i := 0; count == 0 || i < count; i++ {
					if i > 0 {
						select {
						case <-cmd.Context().Done():
							return nil
						case <-time.After(interval):
						}
					}
					rows, err := readTubes(c)
					if err != nil {
						return err
					}
					now := time.Now()
					secs := now.Sub(last).Seconds()
					for j := range rows {
						if p, ok := prev[rows[j].Name]; ok && secs > 0 {
							rows[j].PutsPerSec = float64(max(rows[j].Total-p.Total, 0)) / secs
							rows[j].DeletesPerSec = float64(max(rows[j].Deletes-p.Deletes, 0)) / secs
						}
					}
					prev, last = map[string]tubeRow{}, now
					for _, r := range rows {
						prev[r.Name] = r
					}
					if o.json() {
						if err := json.NewEncoder(o.stdout).Encode(map[string]any{"at": now, "tubes": rows}); err != nil {
							return err
						}
						continue
					}
					fmt.Fprint(o.stdout, "\x1b[H\x1b[2J") // home and clear, as top does
					fmt.Fprintf(o.stdout, "%s  %s  every %s\n\n", o.addr, now.Format(time.TimeOnly), interval)
					printTubes(o.stdout, rows, true)
				}
				return nil
			})
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "refresh every `DURATION`")
	cmd.Flags().IntVarP(&count, "count", "n", 0, "stop after `N` refreshes (0: until interrupted)")
	return cmd
}

// jobOut is how peek and list print a job.
type jobOut struct {
	ID    uint64         `json:"id"`
	Stats map[string]any `json:"stats"`
	Body  string         `json:"body"`
}

func peekCmd(o *options) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use: "peek (ID | TUBE --state ready|delayed|buried)", Short: "A job's stats and body: job ID, or the next job of TUBE in a state",
		Example: "  beangate ctl peek 42\n  beangate ctl peek emails --state buried",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return o.withConn(func(c *beanstalk.Conn) error {
				var (
					id   uint64
					body []byte
					err  error
				)
				if state != "" {
					id, body, err = peekState(c, args[0], state)
				} else if id, err = parseID(args[0]); err == nil {
					body, err = c.Peek(id)
					body = bytes.Clone(body) // read again by stats-job
				}
				if err != nil {
					return err
				}
				st, err := c.StatsJob(id)
				if err != nil {
					return err
				}
				if o.json() {
					return o.printJSON(jobOut{ID: id, Stats: typed(st), Body: string(body)})
				}
				for _, k := range sortedKeys(st) {
					fmt.Fprintf(o.stdout, "%s: %s\n", k, st[k])
				}
				fmt.Fprintf(o.stdout, "body: %s\n", body)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "peek the next job of TUBE in this state instead of a job id")
	return cmd
}

func putCmd(o *options) *cobra.Command {
	var (
		pri        uint32
		delay, ttr time.Duration
	)
	cmd := &cobra.Command{
		Use: "put TUBE BODY", Short: "Put a job (BODY - reads standard input)", Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			body := []byte(args[1])
			if args[1] == "-" {
				var err error
				if body, err = io.ReadAll(o.stdin); err != nil {
					return err
				}
			}
			delaySecs, err := seconds(delay)
			if err != nil {
				return err
			}
			ttrSecs, err := seconds(ttr)
			if err != nil {
				return err
			}
			return o.withConn(func(c *beanstalk.Conn) error {
				if err := c.Use(args[0]); err != nil {
					return err
				}
				id, err := c.Put(pri, delaySecs, ttrSecs, body)
				if err != nil {
					return err
				}
				if o.json() {
					return o.printJSON(map[string]uint64{"id": id})
				}
				fmt.Fprintf(o.stdout, "inserted %d\n", id)
				return nil
			})
		},
	}
	cmd.Flags().Uint32Var(&pri, "pri", 1024, "priority (lower first)")
	cmd.Flags().DurationVar(&delay, "delay", 0, "delay before it is ready")
	cmd.Flags().DurationVar(&ttr, "ttr", time.Minute, "time to run")
	return cmd
}

// printCount prints how many jobs an action did something to: "VERB N job(s)", so that the
// count does not read like a job id; {"VERB": N} in JSON.
func (o *options) printCount(verb string, n uint64) error {
	if o.json() {
		return o.printJSON(map[string]uint64{verb: n})
	}
	fmt.Fprintf(o.stdout, "%s %s\n", verb, jobCount(n))
	return nil
}

func jobCount(n uint64) string {
	if n == 1 {
		return "1 job"
	}
	return fmt.Sprintf("%d jobs", n)
}

// printIDs prints the jobs an action named by id did something to: "VERB job 7" or "VERB 3
// jobs: 7 8 9"; {"VERB": N} in JSON, as printCount.
func (o *options) printIDs(verb string, ids []uint64) error {
	switch {
	case o.json():
		return o.printJSON(map[string]uint64{verb: uint64(len(ids))})
	case len(ids) == 1:
		fmt.Fprintf(o.stdout, "%s job %d\n", verb, ids[0])
	default:
		list := make([]string, len(ids))
		for i, id := range ids {
			list[i] = strconv.FormatUint(id, 10)
		}
		fmt.Fprintf(o.stdout, "%s %s: %s\n", verb, jobCount(uint64(len(ids))), strings.Join(list, " "))
	}
	return nil
}

func kickCmd(o *options) *cobra.Command {
	var job bool
	cmd := &cobra.Command{
		Use: "kick (TUBE [N] | --job ID)", Short: "Kick up to N (default 1) buried, else delayed, jobs of TUBE; or, with --job, the job ID",
		Example: "  beangate ctl kick emails 10\n  beangate ctl kick --job 42",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			return o.withConn(func(c *beanstalk.Conn) error {
				if job {
					id, err := parseID(args[0])
					if err != nil {
						return err
					}
					if err := c.KickJob(id); err != nil {
						return err
					}
					return o.printIDs("kicked", []uint64{id})
				}
				bound := uint64(1)
				if len(args) == 2 {
					n, err := strconv.Atoi(args[1])
					if err != nil || n < 0 {
						return usageError{fmt.Errorf("%q is not a count", args[1])}
					}
					bound = uint64(n)
				}
				if err := c.Use(args[0]); err != nil {
					return err
				}
				n, err := c.Kick(bound)
				if err != nil {
					return err
				}
				return o.printCount("kicked", n)
			})
		},
	}
	cmd.Flags().BoolVar(&job, "job", false, "kick the job whose id is the argument")
	return cmd
}

func deleteCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "delete ID...", Short: "Delete jobs (not those another client holds reserved)", Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return o.withConn(func(c *beanstalk.Conn) error {
				var ids []uint64
				for _, a := range args {
					id, err := parseID(a)
					if err != nil {
						return err
					}
					if err := c.Delete(id); err != nil {
						return fmt.Errorf("delete %d: %w", id, err)
					}
					ids = append(ids, id)
				}
				return o.printIDs("deleted", ids)
			})
		},
	}
}

func pauseCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "pause TUBE SECONDS", Short: "Pause reserves from TUBE (0 unpauses)", Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			secs, err := strconv.ParseUint(args[1], 10, 32)
			if err != nil {
				return usageError{fmt.Errorf("%q is not a number of seconds", args[1])}
			}
			return o.withConn(func(c *beanstalk.Conn) error {
				if err := c.PauseTube(args[0], secs); err != nil {
					return err
				}
				if o.json() {
					return o.printJSON(map[string]uint64{"paused": secs})
				}
				if secs == 0 {
					fmt.Fprintf(o.stdout, "unpaused %s\n", args[0])
				} else {
					fmt.Fprintf(o.stdout, "paused %s for %ds\n", args[0], secs)
				}
				return nil
			})
		},
	}
}

// states is the states a flush or move acts on.
func states(state string) ([]string, error) {
	switch state {
	case "":
		return []string{"ready", "delayed", "buried"}, nil
	case "ready", "delayed", "buried":
		return []string{state}, nil
	}
	return nil, usageError{fmt.Errorf("--state %q: ready, delayed or buried (reserved jobs stay with their holders)", state)}
}

func flushCmd(o *options) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "flush TUBE",
		Short: "Delete every ready, delayed and buried job of TUBE (--state: one of them); reserved jobs stay",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sts, err := states(state)
			if err != nil {
				return err
			}
			if a, ok := o.apiClient(); ok {
				r, err := a.post(cmd.Context(), "/api/flush", console.Action{Tube: args[0], State: state})
				if err != nil {
					return err
				}
				return o.printCount("deleted", r.N)
			}
			// The protocol: peek and delete one job at a time, as any beanstalk client must.
			fmt.Fprintln(o.stderr, "beangate ctl: no --api: flushing through the protocol, one peek and delete per job")
			return o.withConn(func(c *beanstalk.Conn) error {
				if err := c.Use(args[0]); err != nil {
					return err
				}
				var n uint64
				for _, st := range sts {
					for {
						id, _, err := c.PeekState(st)
						if errors.Is(err, beanstalk.ErrNotFound) {
							break
						}
						if err != nil {
							return err
						}
						if err := c.Delete(id); err != nil && !errors.Is(err, beanstalk.ErrNotFound) {
							return err
						}
						n++
					}
				}
				return o.printCount("deleted", n)
			})
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only this state: ready, delayed or buried")
	return cmd
}

func moveCmd(o *options) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "move FROM TO",
		Short: "Move FROM's ready, delayed and buried jobs (--state: one of them) to TO, keeping ids (beangate, --api)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := states(state); err != nil {
				return err
			}
			a, ok := o.apiClient()
			if !ok {
				return fmt.Errorf("move %w: the beanstalk protocol cannot move a job to another tube keeping its id, priority and state (a put and delete would make a new job)", errNoAPI)
			}
			r, err := a.post(cmd.Context(), "/api/move", console.Action{Tube: args[0], To: args[1], State: state})
			if err != nil {
				return err
			}
			return o.printCount("moved", r.N)
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only this state: ready, delayed or buried")
	return cmd
}

func listCmd(o *options) *cobra.Command {
	var (
		state, after string
		limit        int
	)
	cmd := &cobra.Command{
		Use:   "list TUBE",
		Short: "List TUBE's jobs in a state, in its order, a page at a time (beangate, --api)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, ok := o.apiClient()
			if !ok {
				fmt.Fprintf(o.stderr, "beangate ctl: list %v; the beanstalk protocol shows only the first job of a state (peek-%s):\n", errNoAPI, state)
				return o.withConn(func(c *beanstalk.Conn) error {
					id, body, err := peekState(c, args[0], state)
					if errors.Is(err, beanstalk.ErrNotFound) {
						return o.printPage(console.Page{Tube: args[0], State: state})
					}
					if err != nil {
						return err
					}
					st, err := c.StatsJob(id)                  // the peek gives only the body
					if errors.Is(err, beanstalk.ErrNotFound) { // deleted since the peek
						return o.printPage(console.Page{Tube: args[0], State: state})
					}
					if err != nil {
						return err
					}
					return o.printPage(console.Page{Tube: args[0], State: state, Jobs: []console.Job{jobFromStats(id, st, body)}})
				})
			}
			var page console.Page
			q := url.Values{"tube": {args[0]}, "state": {state}, "limit": {strconv.Itoa(limit)}, "after": {after}}
			if err := a.get(cmd.Context(), "/api/jobs", q, &page); err != nil {
				return err
			}
			return o.printPage(page)
		},
	}
	cmd.Flags().StringVar(&state, "state", "ready", "ready, delayed, reserved or buried")
	cmd.Flags().IntVar(&limit, "limit", 50, "jobs per page (at most 1000)")
	cmd.Flags().StringVar(&after, "after", "", "the cursor printed by the previous page")
	return cmd
}

// jobFromStats is a listed job from its stats-job, as the API would list it.
func jobFromStats(id uint64, st map[string]string, body []byte) console.Job {
	num := func(k string) float64 {
		f, _ := strconv.ParseFloat(st[k], 64)
		return f
	}
	return console.Job{
		ID: id, Tube: strings.Trim(st["tube"], `"`), State: strings.Trim(st["state"], `"`),
		Priority: uint32(num("pri")), Age: num("age"), Delay: num("delay"), TTR: num("ttr"),
		TimeLeft: num("time-left"), Reserves: uint32(num("reserves")), Timeouts: uint32(num("timeouts")),
		Releases: uint32(num("releases")), Buries: uint32(num("buries")), Kicks: uint32(num("kicks")),
		BodySize: len(body), Body: body,
	}
}

func (o *options) printPage(p console.Page) error {
	if o.json() {
		if p.Jobs == nil {
			p.Jobs = []console.Job{}
		}
		return o.printJSON(p)
	}
	tw := tabwriter.NewWriter(o.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPRI\tAGE\tTIME-LEFT\tSIZE\tBODY")
	for _, j := range p.Jobs {
		body := strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return '.'
			}
			return r
		}, string(j.Body))
		if len(body) > 60 {
			body = body[:60] + "…"
		}
		fmt.Fprintf(tw, "%d\t%d\t%.0fs\t%.0fs\t%d\t%s\n", j.ID, j.Priority, j.Age, j.TimeLeft, j.BodySize, body)
	}
	_ = tw.Flush()
	if p.Next != "" {
		fmt.Fprintf(o.stdout, "next page: --after %s\n", p.Next)
	}
	return nil
}

func hashPasswordCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "hash-password", Short: "Read a password on standard input, print its bcrypt hash (for --console-password-hash)",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			pw, err := io.ReadAll(o.stdin)
			if err != nil {
				return err
			}
			h, err := bcrypt.GenerateFromPassword([]byte(strings.TrimRight(string(pw), "\r\n")), bcrypt.DefaultCost)
			if err != nil {
				return err
			}
			fmt.Fprintln(o.stdout, string(h))
			return nil
		},
	}
}
