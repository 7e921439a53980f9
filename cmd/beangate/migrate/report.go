package migrate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// PrintPlan prints what would move, per tube and state (--dry-run).
func PrintPlan(w io.Writer, src string, plans []TubePlan) {
	fmt.Fprintf(w, "would move from %s:\n", src)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tube\tready\tdelayed\tburied\treserved (moved once back)\tpaused\t")
	var total [4]uint64
	for _, p := range plans {
		paused := "-"
		if p.Paused > 0 {
			paused = p.Paused.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", p.Tube, p.Ready, p.Delayed, p.Buried, p.Reserved, paused)
		total[0] += p.Ready
		total[1] += p.Delayed
		total[2] += p.Buried
		total[3] += p.Reserved
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t\t\n", total[0], total[1], total[2], total[3])
	_ = tw.Flush()
}

// Total is the jobs a plan would move.
func Total(plans []TubePlan) int64 {
	var n int64
	for _, p := range plans {
		n += int64(p.Ready + p.Delayed + p.Buried + p.Reserved)
	}
	return n
}

// Print writes the final report.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "migrated from %s to %s in %s (%s)\n", r.Source, r.Destination, r.Elapsed.Round(time.Millisecond), rate(r.Moved, r.Elapsed))
	fmt.Fprintf(w, "  moved:            %d (ids kept: %d, ids changed: %d)\n", r.Moved, r.IDsKept, r.IDsChanged)
	skipped := "deleted at the source now"
	if !r.SourceDeletes {
		skipped = "the source is left as it was"
	}
	fmt.Fprintf(w, "  skipped:          %d already imported by an earlier run (%s)\n", r.AlreadyImported, skipped)
	if r.NotDeleted > 0 {
		fmt.Fprintf(w, "  not deleted:      %d imported, but gone from the source before their delete (taken by another client after their reservation ran out: check them)\n", r.NotDeleted)
	}
	for _, t := range r.Paused {
		fmt.Fprintf(w, "  paused:           %s (for what was left of its pause)\n", t)
	}
	r.printLeft(w)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note:             %s\n", n)
	}
	_, why := Compat(r.SourceVersion)
	fmt.Fprintf(w, "  compat:           %s\n", why)
}

// rate is how fast jobs moved, with the digits a slow run (an online one waits for its
// clients) needs: per second down to 1/s, below it per minute.
func rate(moved uint64, elapsed time.Duration) string {
	perSec := 0.0
	if elapsed > 0 {
		perSec = float64(moved) / elapsed.Seconds()
	}
	switch {
	case moved == 0:
		return "no jobs moved"
	case perSec >= 100:
		return fmt.Sprintf("%.0f jobs/s", perSec)
	case perSec >= 1:
		return fmt.Sprintf("%.1f jobs/s", perSec)
	}
	return fmt.Sprintf("%.2g jobs/min", perSec*60)
}

// printLeft names the jobs still at the source, and why each is there.
func (r *Report) printLeft(w io.Writer) {
	if r.LeftErr != nil {
		fmt.Fprintf(w, "  left at source:   could not be listed: %v\n", r.LeftErr)
	}
	lo := r.Left
	if lo == nil {
		return
	}
	if lo.Count == 0 && r.LeftErr == nil {
		fmt.Fprintf(w, "  left at source:   none in the tubes moved\n")
	}
	if lo.Count > 0 {
		fmt.Fprintf(w, "  left at source:   %s in the tubes moved:\n", plural(uint64(lo.Count), "job"))
		for i, j := range lo.Jobs {
			if i == maxNamed {
				fmt.Fprintf(w, "    and %d more\n", len(lo.Jobs)-maxNamed)
				break
			}
			fmt.Fprintf(w, "    %s: %s\n", j, j.Why)
		}
		if n := lo.Count - len(lo.Jobs); n > 0 {
			fmt.Fprintf(w, "    %s not found among ids %d-%d (stats-job asked of each; gone meanwhile, or with an id outside that range)\n", plural(uint64(n), "job"), lo.Scanned[0], lo.Scanned[1])
		}
	}
	if len(lo.Unselected) > 0 {
		var parts []string
		for _, t := range lo.Unselected {
			parts = append(parts, fmt.Sprintf("%s (%s)", t.Tube, plural(t.Jobs, "job")))
		}
		fmt.Fprintf(w, "  not selected:     %s: not matched by --tubes\n", strings.Join(parts, ", "))
	}
}

// Compat is the --compat that answers a source's clients as the source did, and why, from the
// version its stats reported ("" when unknown, as from a binlog). A client written against
// 1.12 may read stats-job's tube literally, and 1.13 quotes it.
func Compat(version string) (flag, why string) {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		if version == "" {
			return "", "the source does not say which beanstalkd it is (a binlog is the same for 1.12 and 1.13): serve beangate with --compat 1.12 if its clients ran against 1.12 (Debian's and Ubuntu's package), else keep the default 1.13"
		}
		return "", fmt.Sprintf("the source reports version %q: serve beangate with --compat 1.12 if its clients ran against 1.12, else keep the default 1.13", version)
	}
	if major == 1 && minor < 13 {
		return "1.12", fmt.Sprintf("the source is beanstalkd %s: serve beangate with --compat 1.12, so that its clients see what they saw (tube names unquoted in stats-job and stats-tube, reserve-with-timeout read as 1.12 read it; the default 1.13 quotes them)", version)
	}
	return "1.13", fmt.Sprintf("the source is beanstalkd %s: the default --compat 1.13 answers as it does", version)
}

// PrintSource prints which --compat suits the source (--dry-run).
func PrintSource(w io.Writer, version string) {
	_, why := Compat(version)
	fmt.Fprintf(w, "compat: %s\n", why)
}
