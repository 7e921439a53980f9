package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/beangate/beangate/backend"
)

// PoliciesFile is where a binlog directory keeps the store's tube policies, as JSON, rewritten
// whole on every change. Like the import keys, they live beside the binlog rather than in it,
// so that beanstalkd can still serve the directory (it ignores the file).
const PoliciesFile = "beangate-policies.json"

// policyFile is the policies file of a binlog directory.
type policyFile struct{ path string }

// filePolicy is one policy as the file spells it: the config's names, durations as Go writes
// them.
type filePolicy struct {
	Tube         string  `json:"tube"`
	MaxReserves  uint32  `json:"max_reserves,omitempty"`
	ExpireAfter  string  `json:"expire_after,omitempty"`
	ExpireAction string  `json:"expire_action,omitempty"`
	MaxReserved  uint32  `json:"max_reserved,omitempty"`
	Rate         float64 `json:"rate,omitempty"`
	Burst        uint32  `json:"burst,omitempty"`
	Unique       bool    `json:"unique,omitempty"`
	RetryDelay   string  `json:"retry_delay,omitempty"`
	RetryMax     string  `json:"retry_delay_max,omitempty"`
	History      bool    `json:"history,omitempty"`
}

// fileDuration is d as the file spells it: "" when unset.
func fileDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// openPolicyFile reads dir's policies file, if any.
func openPolicyFile(dir string) (*policyFile, []backend.Policy, error) {
	f := &policyFile{path: filepath.Join(dir, PoliciesFile)}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	var fps []filePolicy
	if err := json.Unmarshal(data, &fps); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	list := make([]backend.Policy, 0, len(fps))
	for _, fp := range fps {
		p := backend.Policy{Tube: fp.Tube, MaxReserves: fp.MaxReserves, ExpireAction: backend.ExpireAction(fp.ExpireAction),
			MaxReserved: fp.MaxReserved, Rate: fp.Rate, Burst: fp.Burst, Unique: fp.Unique, History: fp.History}
		for _, d := range []struct {
			text string
			to   *time.Duration
		}{{fp.ExpireAfter, &p.ExpireAfter}, {fp.RetryDelay, &p.RetryDelay}, {fp.RetryMax, &p.RetryDelayMax}} {
			if d.text == "" {
				continue
			}
			if *d.to, err = time.ParseDuration(d.text); err != nil {
				return nil, nil, fmt.Errorf("reading %s: tube %q: %w", f.path, fp.Tube, err)
			}
		}
		if err := p.Validate(); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", f.path, err)
		}
		list = append(list, p)
	}
	backend.SortPolicies(list)
	return f, list, nil
}

// save replaces the file with list: written beside it, synced, renamed over it, so that a
// crash leaves the old list or the new one.
func (f *policyFile) save(list []backend.Policy) error {
	fps := make([]filePolicy, len(list))
	for i, p := range list {
		fps[i] = filePolicy{Tube: p.Tube, MaxReserves: p.MaxReserves, ExpireAction: string(p.ExpireAction),
			MaxReserved: p.MaxReserved, Rate: p.Rate, Burst: p.Burst, Unique: p.Unique,
			ExpireAfter: fileDuration(p.ExpireAfter), RetryDelay: fileDuration(p.RetryDelay),
			RetryMax: fileDuration(p.RetryDelayMax), History: p.History}
	}
	data, err := json.MarshalIndent(fps, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(f.path, append(data, '\n'))
}

// replaceFile replaces path with data: written beside it, synced, renamed over it, so that a
// crash leaves the old content or the new.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

func writeSynced(path string, data []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		_ = fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		_ = fh.Close()
		return err
	}
	return fh.Close()
}
