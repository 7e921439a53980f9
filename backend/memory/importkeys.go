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

// ImportKeysFile is where a binlog directory keeps the keys of imported jobs (backend.Importer),
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

// keyFile is the open key file of a binlog directory.
type keyFile struct {
	mu sync.Mutex // appends from concurrent imports, one at a time
	f  *os.File
}

// openKeyFile reads dir's key file into keys and opens it for appending. A torn last line (a
// crash while appending) is dropped: its jobs' keys are recovered by sameJobLocked.
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &keyFile{f: f}, nil
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
	return k.f.Close()
}
