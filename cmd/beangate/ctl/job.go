package ctl

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/beangate/beangate/gateway/console"
)

// jobCmd is `beangate ctl job ID`: a job's stats and its history, through the API (the
// protocol keeps no history).
func jobCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "job ID",
		Short:   "A job's stats and history: who put and reserved it, how each reservation ended (beangate, --api)",
		Example: "  beangate ctl --api http://127.0.0.1:8080 job 42",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			a, ok := o.apiClient()
			if !ok {
				return fmt.Errorf("job %w: a job's history is beangate's (peek ID shows its stats)", errNoAPI)
			}
			var j console.Job
			if err := a.get(cmd.Context(), "/api/job", url.Values{"id": {strconv.FormatUint(id, 10)}}, &j); err != nil {
				return err
			}
			if o.json() {
				if j.Events == nil {
					j.Events = []console.Event{}
				}
				return o.printJSON(j)
			}
			o.printJob(j)
			return nil
		},
	}
}

// printJob prints a job's stats on a line, then its history as a table.
func (o *options) printJob(j console.Job) {
	fmt.Fprintf(o.stdout, "job %d in %s: %s, pri %d, age %s, reserves %d, timeouts %d, releases %d, buries %d, kicks %d\n",
		j.ID, j.Tube, j.State, j.Priority, secondsDuration(j.Age).Round(time.Second), j.Reserves, j.Timeouts,
		j.Releases, j.Buries, j.Kicks)
	if len(j.Events) == 0 {
		fmt.Fprintf(o.stdout, "no history: its tube keeps none (beangate ctl policy set %s --history, for jobs put from then on)\n", j.Tube)
		return
	}
	tw := tabwriter.NewWriter(o.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tCONNECTION\tADDRESS\tDETAIL")
	for _, e := range j.Events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.At.UTC().Format("2006-01-02T15:04:05.000Z"), e.Kind,
			orDefault(e.Session, "-"), orDefault(e.Addr, "-"), eventDetail(e))
	}
	_ = tw.Flush()
}

// eventDetail is what an event adds to its kind: the delay asked for or given, the policy that
// acted ("by the worker" for a bury that is not a policy's).
func eventDetail(e console.Event) string {
	var parts []string
	if e.Delay > 0 {
		parts = append(parts, "delay "+secondsDuration(e.Delay).String())
	}
	switch {
	case e.Policy != "":
		parts = append(parts, "by policy "+e.Policy)
	case e.Kind == "buried":
		parts = append(parts, "by the worker")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
