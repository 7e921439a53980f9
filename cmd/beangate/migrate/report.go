package migrate

import (
	"fmt"
	"io"
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
	rate := 0.0
	if r.Elapsed > 0 {
		rate = float64(r.Moved) / r.Elapsed.Seconds()
	}
	fmt.Fprintf(w, "migrated from %s to %s in %s (%.0f jobs/s)\n", r.Source, r.Destination, r.Elapsed.Round(time.Millisecond), rate)
	fmt.Fprintf(w, "  moved:            %d (ids kept: %d, ids changed: %d)\n", r.Moved, r.IDsKept, r.IDsChanged)
	fmt.Fprintf(w, "  skipped:          %d already imported by an earlier run (deleted at the source now)\n", r.AlreadyImported)
	if r.NotDeleted > 0 {
		fmt.Fprintf(w, "  not deleted:      %d imported, but gone from the source before their delete (taken by another client after their reservation ran out: check them)\n", r.NotDeleted)
	}
	for _, t := range r.Paused {
		fmt.Fprintf(w, "  paused:           %s (for what was left of its pause)\n", t)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note:             %s\n", n)
	}
}
