package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/beangate/beangate/backend/memory/binlog"
)

const binlogUsage = `Usage: beangate binlog inspect DIR   report a stopped server's binlog directory
       beangate binlog compact DIR   rewrite it to its live jobs only (the server must be stopped)
`

// binlogTool is `beangate binlog inspect|compact DIR`, for operators: what a beanstalkd or
// beangate binlog directory holds, and shrinking one to its live jobs. Both refuse a
// directory a running server holds (exit 10, as the server would).
func binlogTool(_ context.Context, p process, args []string) int {
	if wantsHelp(args) {
		fmt.Fprint(p.stdout, binlogUsage)
		return exitOK
	}
	if len(args) != 2 || (args[0] != "inspect" && args[0] != "compact") {
		fmt.Fprint(p.stderr, binlogUsage)
		return exitUsage
	}
	dir := args[1]
	log := slog.New(slog.NewTextHandler(p.stderr, nil))
	var err error
	if args[0] == "inspect" {
		var r *binlog.Report
		if r, err = binlog.Inspect(dir, log); err == nil {
			printReport(p.stdout, dir, r)
		}
	} else {
		var before, after *binlog.Report
		if before, after, err = binlog.Compact(dir, log); err == nil {
			fmt.Fprintf(p.stdout, "compacted %s: %d files, %d bytes -> %d file, %d bytes; %d jobs, next id %d\n",
				dir, len(before.Files), before.Bytes, len(after.Files), after.Bytes, after.Jobs, after.NextID)
		}
	}
	switch {
	case errors.Is(err, binlog.ErrLocked):
		fmt.Fprintf(p.stderr, "beangate: %s is in use by a running server (beanstalkd or beangate); stop it first\n", dir)
		return exitLocked
	case err != nil:
		fmt.Fprintf(p.stderr, "beangate: binlog %s %s: %v\n", args[0], dir, err)
		return exitFailure
	}
	return exitOK
}

func printReport(w io.Writer, dir string, r *binlog.Report) {
	fmt.Fprintf(w, "directory %s: %d files, %d bytes\n", dir, len(r.Files), r.Bytes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\tversion\tbytes\tread\tfull records\tshort records\t note\t")
	for _, f := range r.Files {
		note := f.Problem
		if note == "" && f.ZeroTail {
			note = "zero tail (preallocated, or a crash)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t %s\t\n", binlog.FileName(f.N), f.Version, f.Size, f.Used, f.Full, f.Short, note)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "jobs: %d live, next id %d\n", r.Jobs, r.NextID)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tube\tready\tdelayed\tburied\t")
	for _, t := range r.Tubes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", t.Name, t.Ready, t.Delayed, t.Buried)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "live bytes: %d (the live jobs' full records); dead bytes: %d\n", r.LiveBytes, r.Bytes-r.LiveBytes)
}
