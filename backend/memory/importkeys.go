package memory

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ImportKeysFile is where a binlog directory keeps the keys of imported jobs (backend.Admin.Import),
// one line per job: its id and its key, quoted. beanstalkd and the binlog reader ignore it.
//
// Why a file beside the binlog rather than records in it: beanstalkd must still be able to serve
// the directory. The keys are appended and synced after the jobs' records are committed, so a
// crash in between leaves jobs without keys; Import then recognises such a job by its own id,
// tube and body (sameJobLocked) — the importer holds the directory's lock, so no client can have
// deleted it meanwhile.
const ImportKeysFile = "beangate-imported"

type keyRecord struct {
	id  uint64
	key string
}

// keyFile is the key file of a binlog directory, created by the first import (a directory
// that never had one gets no stray file).
type keyFile struct {
	mu   sync.Mutex // appends from concurrent imports, one at a time
	path string
	f    *os.File // nil until the first append
}

// openKeyFile reads dir's key file, if any, into keys. A torn last line (a crash while
// appending) is dropped: its jobs' keys are recovered by sameJobLocked.
func openKeyFile(dir string, keys map[string]uint64) (*keyFile, error) {
	path := filepath.Join(dir, ImportKeysFile)
	if data, err := os.ReadFile(path); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			idText, quoted, ok := strings.Cut(sc.Text(), " ")
			id, err := strconv.ParseUint(idText, 10, 64)
			key, qerr := strconv.Unquote(quoted)
			if !ok || err != nil || qerr != nil {
				continue
			}
			keys[key] = id
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &keyFile{path: path}, nil
}

// append writes and syncs records. A line is started on a new line, so that after a torn line
// the next record still parses.
func (k *keyFile) append(records []keyRecord) error {
	var buf []byte
	for _, r := range records {
		buf = strconv.AppendUint(buf, r.id, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendQuote(buf, r.key)
		buf = append(buf, '\n')
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		f, err := os.OpenFile(k.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		k.f = f
		if err := syncDir(filepath.Dir(k.path)); err != nil {
			return err
		}
	}
	if _, err := k.f.Write(buf); err != nil {
		return fmt.Errorf("writing %s: %w", ImportKeysFile, err)
	}
	if err := k.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", ImportKeysFile, err)
	}
	return nil
}

func (k *keyFile) close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return nil
	}
	return k.f.Close()
}

// syncDir makes a file just created in dir outlive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
