package ctl

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/beangate/beangate/gateway/console"
)

// scheduleCmd is `beangate ctl schedule set|list|clear`: a beangate's periodic jobs, through its
// API (the protocol has no word for them).
func scheduleCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Set, list and clear periodic jobs: a job put at every tick of a cron expression or interval, once for the fleet (beangate, --api)",
	}
	cmd.AddCommand(scheduleSetCmd(o), scheduleListCmd(o), scheduleClearCmd(o))
	return cmd
}

func (o *options) scheduleAPI() (*apiClient, error) {
	a, ok := o.apiClient()
	if !ok {
		return nil, fmt.Errorf("schedule %w: schedules are beangate's, set through its API", errNoAPI)
	}
	return a, nil
}

func scheduleSetCmd(o *options) *cobra.Command {
	var (
		s                 console.Schedule
		every, ttr, delay time.Duration
		priority          uint32
	)
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Set the schedule NAME, replacing it whole: --tube, and --cron or --every",
		Long: `Set the schedule NAME: a job with --body put into --tube at every tick of --cron (a standard
5-field cron expression, in UTC unless --timezone is given) or every --every, once for the whole
fleet. A schedule replaced with the same timing keeps its last run.`,
		Example: `  beangate ctl schedule set hourly-report --tube reports --cron '0 * * * *' --body '{"kind":"hourly"}'
  beangate ctl schedule set heartbeat --tube pings --every 30s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, d := range []struct {
				flag string
				v    time.Duration
			}{{"--every", every}, {"--ttr", ttr}, {"--delay", delay}} {
				if d.v < 0 {
					return usageError{fmt.Errorf("%s %v: must not be negative", d.flag, d.v)}
				}
			}
			if s.Tube == "" {
				return usageError{fmt.Errorf("--tube is required")}
			}
			a, err := o.scheduleAPI()
			if err != nil {
				return err
			}
			s.Name = args[0]
			s.Every, s.TTR, s.Delay = every.Seconds(), ttr.Seconds(), delay.Seconds()
			if cmd.Flags().Changed("priority") {
				s.Priority = &priority
			}
			if _, err := a.post(cmd.Context(), "/api/schedule", console.Action{Schedule: &s}); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(s)
			}
			fmt.Fprintf(o.stdout, "set %s: %s into %s\n", s.Name, whenText(s), s.Tube)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.Tube, "tube", "", "the tube to put the job into")
	f.StringVar(&s.Cron, "cron", "", "a standard 5-field cron `EXPRESSION` (minute hour day-of-month month day-of-week)")
	f.StringVar(&s.Timezone, "timezone", "", "the IANA time `ZONE` of --cron (default UTC)")
	f.DurationVar(&every, "every", 0, "put a job every `DURATION` instead of by --cron")
	f.StringVar(&s.Body, "body", "", "the job's body")
	f.Uint32Var(&priority, "priority", 1024, "the job's priority")
	f.DurationVar(&ttr, "ttr", time.Minute, "the job's time to run")
	f.DurationVar(&delay, "delay", 0, "put the job delayed by `DURATION`")
	return cmd
}

func scheduleListCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every schedule with its last and next run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := o.scheduleAPI()
			if err != nil {
				return err
			}
			var ss console.Schedules
			if err := a.get(cmd.Context(), "/api/schedules", nil, &ss); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(ss)
			}
			printSchedules(o.stdout, ss.Schedules)
			return nil
		},
	}
}

func scheduleClearCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "clear NAME",
		Short: "Remove the schedule NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := o.scheduleAPI()
			if err != nil {
				return err
			}
			if _, err := a.post(cmd.Context(), "/api/schedule-clear", console.Action{Name: args[0]}); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(map[string]string{"cleared": args[0]})
			}
			fmt.Fprintf(o.stdout, "cleared %s\n", args[0])
			return nil
		},
	}
}

func printSchedules(w io.Writer, ss []console.Schedule) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTUBE\tWHEN\tLAST-RUN\tLAST-JOB\tNEXT-RUN")
	at := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, s := range ss {
		job := "-"
		if s.LastJob != 0 {
			job = fmt.Sprint(s.LastJob)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Tube, whenText(s), at(s.LastRun), job, at(s.NextRun))
	}
	_ = tw.Flush()
}

// whenText is a schedule's timing: "cron '0 * * * *' UTC", "every 30s".
func whenText(s console.Schedule) string {
	if s.Cron != "" {
		return fmt.Sprintf("cron '%s' %s", s.Cron, orDefault(s.Timezone, "UTC"))
	}
	return "every " + secondsDuration(s.Every).String()
}
