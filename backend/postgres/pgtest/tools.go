package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
)

// Tools runs PostgreSQL's programs (initdb, pg_ctl, pg_basebackup, …) for private servers whose
// files are under one directory. initdb and postgres refuse to run as root: as root the programs
// run as the postgres user, who is given the directory.
type Tools struct {
	bin   string   // directory of initdb, pg_ctl, postgres
	runAs []string // prefix running a command as the postgres user when we are root
}

// NewTools finds the newest PostgreSQL installed and, as root, gives dir to the postgres user
// (dir's parents must let that user through).
func NewTools(dir string) (*Tools, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	t := &Tools{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and there is no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		t.runAs = []string{"runuser", "-u", "postgres", "--"}
	}
	return t, nil
}

// Command runs PostgreSQL's program name with args, as the postgres user when we are root.
func (t *Tools) Command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, t.runAs...), filepath.Join(t.bin, name)), args...)
	return exec.Command(argv[0], argv[1:]...)
}

// binDir finds the newest /usr/lib/postgresql/<version>/bin holding initdb, or the directory of
// initdb on PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	version := func(initdb string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(initdb))), 64)
		return v
	}
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no initdb in /usr/lib/postgresql/*/bin or on PATH")
}
