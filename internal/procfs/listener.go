package procfs

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ListenerPID finds the local process listening on addr's TCP port: the socket inode from
// /proc/net/tcp{,6}, then the process holding that inode among /proc/*/fd.
func ListenerPID(addr string) (int, error) {
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningInodes(table, port, inodes); err != nil && !os.IsNotExist(err) {
			return 0, err
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no local listener on port %d", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, fmt.Errorf("port %d: listener's process not visible in /proc", port)
}

// listeningInodes adds the inodes of sockets in LISTEN state (0A) on port from one proc table.
func listeningInodes(table string, port uint64, into map[string]bool) error {
	data, err := os.ReadFile(table)
	if err != nil {
		return err
	}
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			into[f[9]] = true
		}
	}
	return nil
}
