package procfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RSSKiB reads VmRSS of a process from /proc/PID/status.
func RSSKiB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb, err
		}
	}
	return 0, fmt.Errorf("pid %d: no VmRSS in /proc status", pid)
}

// ContextSwitches is how many times the threads of a live process have been switched out, by
// waiting (voluntary) or by the kernel (nonvoluntary), from /proc/PID/task/*/status. It does not
// depend on the machine's speed: for a gateway, each is a wait for a client or the store and its
// wake-up, which on a virtual machine cost more than most of the work around them.
func ContextSwitches(pid int) (int64, error) {
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
