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

// SchedulesFile is where a binlog directory keeps the store's schedules and their last runs, as
// JSON, rewritten whole on every change (as the policies file is, and for the same reason:
// beanstalkd can still serve the directory).
const SchedulesFile = "beangate-schedules.json"

type scheduleFile struct{ path string }

// fileSchedule is one schedule as the file spells it.
type fileSchedule struct {
	Name     string    `json:"name"`
	Tube     string    `json:"tube"`
	Cron     string    `json:"cron,omitempty"`
	Timezone string    `json:"timezone,omitempty"`
	Every    string    `json:"every,omitempty"`
	Body     []byte    `json:"body"`
	Priority uint32    `json:"priority"`
	TTR      string    `json:"ttr"`
	Delay    string    `json:"delay,omitempty"`
	LastTick time.Time `json:"last_tick"`
	PrevTick time.Time `json:"prev_tick"`
	LastJob  uint64    `json:"last_job,omitempty"`
	LastRun  time.Time `json:"last_run"`
}

// openScheduleFile reads dir's schedules file, if any.
func openScheduleFile(dir string) (*scheduleFile, []scheduleEntry, error) {
	f := &scheduleFile{path: filepath.Join(dir, SchedulesFile)}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	var fss []fileSchedule
	if err := json.Unmarshal(data, &fss); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	list := make([]scheduleEntry, 0, len(fss))
	for _, x := range fss {
		e := scheduleEntry{ScheduleState: backend.ScheduleState{
			Schedule: backend.Schedule{Name: x.Name, Tube: x.Tube, Cron: x.Cron, Timezone: x.Timezone,
				Body: x.Body, Priority: x.Priority},
			LastTick: x.LastTick, LastJob: x.LastJob, LastRun: x.LastRun}, PrevTick: x.PrevTick}
		for _, d := range []struct {
			text string
			to   *time.Duration
		}{{x.Every, &e.Every}, {x.TTR, &e.TTR}, {x.Delay, &e.Delay}} {
			if d.text == "" {
				continue
			}
			if *d.to, err = time.ParseDuration(d.text); err != nil {
				return nil, nil, fmt.Errorf("reading %s: schedule %q: %w", f.path, x.Name, err)
			}
		}
		if err := e.Validate(); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", f.path, err)
		}
		list = append(list, e)
	}
	return f, list, nil
}

// save replaces the file with list: written beside it, synced, renamed over it.
func (f *scheduleFile) save(list []scheduleEntry) error {
	fss := make([]fileSchedule, len(list))
	for i, e := range list {
		fss[i] = fileSchedule{Name: e.Name, Tube: e.Tube, Cron: e.Cron, Timezone: e.Timezone,
			Every: fileDuration(e.Every), Body: e.Body, Priority: e.Priority, TTR: e.TTR.String(),
			Delay: fileDuration(e.Delay), LastTick: e.LastTick, PrevTick: e.PrevTick, LastJob: e.LastJob,
			LastRun: e.LastRun}
	}
	data, err := json.MarshalIndent(fss, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(f.path, append(data, '\n'))
}
