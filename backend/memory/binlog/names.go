package binlog

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const filePrefix = "binlog."

// FileName is the name of log file n in a directory.
func FileName(n uint64) string { return filePrefix + strconv.FormatUint(n, 10) }

// listFiles returns the numbers of the binlog.N files in dir, ascending. Other names are not
// the binlog's (beanstalkd ignores them too).
func listFiles(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ns []uint64
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), filePrefix)
		if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil || n == 0 {
			continue
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns, nil
}

func filePath(dir string, n uint64) string { return filepath.Join(dir, FileName(n)) }
