package main

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

// processCPU is the user+system CPU a process has used so far.
func processCPU(pid int) (time.Duration, error) {
	s, err := readProcStat(pid)
	return s.utime + s.stime, err
}

// processTreeCPU is the CPU of a process, of its live children, and of the children it has
// already reaped (cutime/cstime): for a PostgreSQL postmaster, every backend and background
// process, including connections that ended between two samples.
func processTreeCPU(pid int) (time.Duration, error) {
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

// processSwitches is how many times the threads of a live process have been switched out, by
// waiting (voluntary) or by the kernel (nonvoluntary), from /proc/PID/task/*/status. It does not
// depend on the machine's speed: for a gateway, each is a wait for a client or the store and its
// wake-up, which on a virtual machine cost more than most of the work around them.
func processSwitches(pid int) (int64, error) {
	paths, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/[0-9]*/status", pid))
	if err != nil || len(paths) == 0 {
		return 0, fmt.Errorf("process %d: no threads in /proc", pid)
	}
	var total int64
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		n, err := parseSwitches(string(data))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		total += n
	}
	return total, nil
}

// parseSwitches sums the voluntary_ctxt_switches and nonvoluntary_ctxt_switches of a status file.
func parseSwitches(status string) (int64, error) {
	var total int64
	found := 0
	for _, line := range strings.Split(status, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "voluntary_ctxt_switches" && key != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		total += n
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("no context switch counts")
	}
	return total, nil
}
