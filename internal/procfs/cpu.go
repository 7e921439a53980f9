// Package procfs reads what Linux's /proc says of a process: its CPU time (and its children's),
// its context switches and resident memory, and which process listens on a TCP port. The
// bench uses it for a server's cost per job, the store probe for PostgreSQL's CPU.
package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU fields (USER_HZ, 100 on every Linux ABI Go
// supports; reading it via sysconf would need cgo).
const clockTick = 10 * time.Millisecond

// procStat is what the harness reads from /proc/PID/stat: the parent and the CPU times.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime time.Duration
}

// parseProcStat reads one /proc/PID/stat line. The command name (field 2) is in parentheses
// and may itself hold spaces and parentheses, so fields are counted after its last ')'.
func parseProcStat(line string) (procStat, error) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("proc stat: no command name in %q", line)
	}
	// After ") ": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := strings.Fields(line[end+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("proc stat: %d fields after the name, want at least 15", len(f))
	}
	var n [5]int64
	for i, idx := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[idx], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("proc stat field %d: %w", idx+3, err)
		}
		n[i] = v
	}
	return procStat{ppid: int(n[0]), utime: time.Duration(n[1]) * clockTick, stime: time.Duration(n[2]) * clockTick,
		cutime: time.Duration(n[3]) * clockTick, cstime: time.Duration(n[4]) * clockTick}, nil
}

func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(data))
}

// CPU is the user+system CPU a process has used so far.
func CPU(pid int) (time.Duration, error) {
	s, err := readProcStat(pid)
	return s.utime + s.stime, err
}

// TreeCPU is the CPU of a process, of its live children, and of the children it has
// already reaped (cutime/cstime): for a PostgreSQL postmaster, every backend and background
// process, including connections that ended between two samples.
func TreeCPU(pid int) (time.Duration, error) {
	root, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	total := root.utime + root.stime + root.cutime + root.cstime
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended: its time is in the parent's cutime/cstime now
		}
		if s, err := parseProcStat(string(data)); err == nil && s.ppid == pid {
			total += s.utime + s.stime
		}
	}
	return total, nil
}
