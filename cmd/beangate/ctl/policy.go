package ctl

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/beangate/beangate/gateway/console"
)

// policyCmd is `beangate ctl policy set|get|list|clear`: a beangate's tube policies, through
// its API (the protocol has no word for them).
func policyCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Set, show and clear tube policies: max reserves, retry backoff, expiry, concurrency and rate caps, unique puts, job histories (beangate, --api)",
	}
	cmd.AddCommand(policySetCmd(o), policyGetCmd(o), policyListCmd(o), policyClearCmd(o))
	return cmd
}

func (o *options) policyAPI() (*apiClient, error) {
	a, ok := o.apiClient()
	if !ok {
		return nil, fmt.Errorf("policy %w: tube policies are beangate's, set through its API", errNoAPI)
	}
	return a, nil
}

func policySetCmd(o *options) *cobra.Command {
	var (
		p                       console.Policy
		expireAfter, retryDelay time.Duration
		retryMax                time.Duration
	)
	cmd := &cobra.Command{
		Use:   "set TUBE",
		Short: "Set the policy of TUBE (a name or a glob such as 'email-*'), replacing it whole",
		Long: `Set the policy of TUBE, a tube name or a glob with '*': the most specific match governs a
tube, whole (an empty policy exempts a tube from a broader glob). Flags not given set no limit.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, d := range []struct {
				flag string
				v    time.Duration
			}{{"--expire-after", expireAfter}, {"--retry-delay", retryDelay}, {"--retry-delay-max", retryMax}} {
				if d.v < 0 {
					return usageError{fmt.Errorf("%s %v: must not be negative", d.flag, d.v)}
				}
			}
			a, err := o.policyAPI()
			if err != nil {
				return err
			}
			p.Tube = args[0]
			p.ExpireAfter, p.RetryDelay, p.RetryMax = expireAfter.Seconds(), retryDelay.Seconds(), retryMax.Seconds()
			if _, err := a.post(cmd.Context(), "/api/policy", console.Action{Tube: p.Tube, Policy: &p}); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(p)
			}
			fmt.Fprintf(o.stdout, "set %s: %s\n", p.Tube, describePolicy(p))
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint32Var(&p.MaxReserves, "max-reserves", 0, "bury a job reserved `N` times instead of requeueing it")
	f.DurationVar(&retryDelay, "retry-delay", 0, "delay a job that comes back (TTR, holder gone, release with delay 0) `DURATION` × 2^(reserves−1)")
	f.DurationVar(&retryMax, "retry-delay-max", 0, "the longest --retry-delay backoff (default: no cap short of 2^32−1 s)")
	f.DurationVar(&expireAfter, "expire-after", 0, "delete (or bury) a job not deleted this `DURATION` after its put")
	f.StringVar(&p.ExpireAction, "expire-action", "", "what --expire-after does: delete (the default) or bury")
	f.Uint32Var(&p.MaxReserved, "max-reserved", 0, "at most `N` jobs of the tube reserved at once, fleet-wide")
	f.Float64Var(&p.Rate, "rate", 0, "at most `R` reserves per second from the tube, fleet-wide")
	f.Uint32Var(&p.Burst, "burst", 0, "reserves the rate lets through at once (default 1)")
	f.BoolVar(&p.Unique, "unique", false, "a put whose body equals a ready or delayed job's returns that job's id")
	f.BoolVar(&p.History, "history", false, "keep each job's history: who put, reserved, released, buried it, timeouts (beangate ctl job ID)")
	return cmd
}

func policyGetCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "get TUBE",
		Short: "Show the policy set for TUBE and the one governing a tube of that name",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := o.policyAPI()
			if err != nil {
				return err
			}
			var tp console.TubePolicy
			if err := a.get(cmd.Context(), "/api/policy", url.Values{"tube": {args[0]}}, &tp); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(tp)
			}
			switch {
			case tp.Policy != nil:
				fmt.Fprintf(o.stdout, "%s: %s\n", args[0], describePolicy(*tp.Policy))
			case tp.Governing != nil:
				fmt.Fprintf(o.stdout, "%s: governed by %s: %s\n", args[0], tp.Governing.Tube, describePolicy(*tp.Governing))
			default:
				fmt.Fprintf(o.stdout, "%s: no policy\n", args[0])
			}
			return nil
		},
	}
}

func policyListCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every tube policy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := o.policyAPI()
			if err != nil {
				return err
			}
			var ps console.Policies
			if err := a.get(cmd.Context(), "/api/policies", nil, &ps); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(ps)
			}
			printPolicies(o.stdout, ps.Policies)
			return nil
		},
	}
}

func policyClearCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "clear TUBE",
		Short: "Remove the policy set for TUBE (exactly that name or glob)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := o.policyAPI()
			if err != nil {
				return err
			}
			if _, err := a.post(cmd.Context(), "/api/policy-clear", console.Action{Tube: args[0]}); err != nil {
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

func printPolicies(w io.Writer, ps []console.Policy) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TUBE\tMAX-RESERVES\tRETRY-DELAY\tEXPIRE-AFTER\tEXPIRE-ACTION\tMAX-RESERVED\tRATE\tBURST\tUNIQUE\tHISTORY")
	dash := func(n uint64) string {
		if n == 0 {
			return "-"
		}
		return strconv.FormatUint(n, 10)
	}
	for _, p := range ps {
		expire, action, rate := "-", "-", "-"
		if p.ExpireAfter > 0 {
			expire, action = secondsDuration(p.ExpireAfter).String(), orDefault(p.ExpireAction, "delete")
		}
		if p.Rate > 0 {
			rate = strconv.FormatFloat(p.Rate, 'g', -1, 64) + "/s"
		}
		burst := dash(uint64(p.Burst))
		if p.Rate > 0 && p.Burst == 0 {
			burst = "1"
		}
		unique := "-"
		if p.Unique {
			unique = "yes"
		}
		history := "-"
		if p.History {
			history = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Tube, dash(uint64(p.MaxReserves)), retryText(p),
			expire, action, dash(uint64(p.MaxReserved)), rate, burst, unique, history)
	}
	_ = tw.Flush()
}

// describePolicy is a policy in the flags' words.
func describePolicy(p console.Policy) string {
	s := ""
	add := func(part string) {
		if s != "" {
			s += " "
		}
		s += part
	}
	if p.MaxReserves > 0 {
		add(fmt.Sprintf("--max-reserves %d", p.MaxReserves))
	}
	if p.RetryDelay > 0 {
		add("--retry-delay " + secondsDuration(p.RetryDelay).String())
		if p.RetryMax > 0 {
			add("--retry-delay-max " + secondsDuration(p.RetryMax).String())
		}
	}
	if p.ExpireAfter > 0 {
		add(fmt.Sprintf("--expire-after %s --expire-action %s", secondsDuration(p.ExpireAfter), orDefault(p.ExpireAction, "delete")))
	}
	if p.MaxReserved > 0 {
		add(fmt.Sprintf("--max-reserved %d", p.MaxReserved))
	}
	if p.Rate > 0 {
		add(fmt.Sprintf("--rate %s --burst %d", strconv.FormatFloat(p.Rate, 'g', -1, 64), max(p.Burst, 1)))
	}
	if p.Unique {
		add("--unique")
	}
	if p.History {
		add("--history")
	}
	if s == "" {
		return "no limits (exempt from broader globs)"
	}
	return s
}

// retryText is a policy's backoff for the list: "1s..10m0s" (first..cap), "1s" without a cap.
func retryText(p console.Policy) string {
	switch {
	case p.RetryDelay == 0:
		return "-"
	case p.RetryMax == 0:
		return secondsDuration(p.RetryDelay).String()
	}
	return secondsDuration(p.RetryDelay).String() + ".." + secondsDuration(p.RetryMax).String()
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
