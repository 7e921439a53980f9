package main

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beangate/beangate/internal/procfs"
	"github.com/beangate/beangate/internal/storeprobe"
)

// costMeter measures what a round's jobs cost: the gateway processes' CPU (from /proc, every
// gateway of an "A+B" target) and, with -store, the store's CPU, commands and WAL. Figures that
// cannot be read are NaN; every round reports the same list so rounds and servers line up.
type costMeter struct {
	gatewayPIDs []int
	probe       storeprobe.Probe
	gateway     time.Duration
	switches    int64 // the gateways' context switches, -1 if unknown
	store       storeprobe.Sample
	storeOK     bool
}

const probeTimeout = 5 * time.Second

// startCost takes the "before" sample; a probe that cannot be opened leaves the store figures NaN.
func startCost(t target) *costMeter {
	m := &costMeter{gatewayPIDs: gatewayPIDs(t)}
	m.gateway = m.gatewayCPU()
	m.switches = m.gatewaySwitches()
	if t.Store != "" {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		if p, err := storeprobe.Open(ctx, t.Store); err == nil {
			m.probe = p
			m.store, err = p.Sample(ctx)
			m.storeOK = err == nil
		}
	}
	return m
}

// finish takes the "after" sample and returns the per-job figures.
func (m *costMeter) finish(jobs int64) []metric {
	gateway := math.NaN()
	if g := m.gatewayCPU(); g >= 0 && m.gateway >= 0 && jobs > 0 {
		gateway = float64(g-m.gateway) / float64(time.Microsecond) / float64(jobs)
	}
	out := []metric{
		{Name: "gateway CPU per job", Unit: "µs", Value: gateway, Lower: true},
		{Name: "gateway context switches per job", Unit: "switches", Value: perJob(m.switches, m.gatewaySwitches(), jobs), Lower: true},
	}
	before, after := storeprobe.Unknown, storeprobe.Unknown
	if m.probe != nil {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		if s, err := m.probe.Sample(ctx); err == nil && m.storeOK {
			before, after = m.store, s
		}
		m.probe.Close()
	}
	if before.CPU < 0 {
		jobs = 0 // every store figure NaN
	}
	out = append(out, storeMetrics(before, after, jobs)...)
	return append(out, masterMetrics(before.Masters, after.Masters, jobs)...)
}

// gatewayCPU sums the gateways' CPU; -1 when any is unknown.
func (m *costMeter) gatewayCPU() time.Duration { return sumOver(m.gatewayPIDs, procfs.CPU) }

// gatewaySwitches sums the gateways' context switches; -1 when any is unknown.
func (m *costMeter) gatewaySwitches() int64 { return sumOver(m.gatewayPIDs, procfs.ContextSwitches) }

// sumOver sums read(pid) over pids; -1 when there are none or any read fails.
func sumOver[T time.Duration | int64](pids []int, read func(pid int) (T, error)) T {
	if len(pids) == 0 {
		return -1
	}
	var total T
	for _, pid := range pids {
		v, err := read(pid)
		if err != nil {
			return -1
		}
		total += v
	}
	return total
}

// gatewayPIDs are the processes listening on the target's addresses (-pid for a single one).
func gatewayPIDs(t target) []int {
	addrs := strings.Split(t.Addr, "+")
	if t.PID != 0 && len(addrs) == 1 {
		return []int{t.PID}
	}
	var pids []int
	for _, a := range addrs {
		pid, err := procfs.ListenerPID(a)
		if err != nil {
			return nil
		}
		pids = append(pids, pid)
	}
	return pids
}

// perJob is (after-before)/jobs, NaN when either side is unknown or there were no jobs.
func perJob(before, after, jobs int64) float64 {
	if before < 0 || after < 0 || jobs <= 0 {
		return math.NaN()
	}
	return float64(after-before) / float64(jobs)
}

// storeMetrics are a round's store figures per job, always the same list so rounds line up.
func storeMetrics(before, after storeprobe.Sample, jobs int64) []metric {
	cpu := math.NaN()
	if jobs > 0 {
		cpu = float64(after.CPU-before.CPU) / float64(time.Microsecond) / float64(jobs)
	}
	return []metric{
		{Name: "store CPU per job", Unit: "µs", Value: cpu, Lower: true},
		{Name: "store commands per job", Unit: "cmds", Value: perJob(before.Commands, after.Commands, jobs), Lower: true},
		{Name: "store FCALLs per job", Unit: "calls", Value: perJob(before.FCalls, after.FCalls, jobs), Lower: true},
		{Name: "store WAL per job", Unit: "bytes", Value: perJob(before.WALBytes, after.WALBytes, jobs), Lower: true},
		{Name: "store commits per job", Unit: "xacts", Value: perJob(before.Commits, after.Commits, jobs), Lower: true},
		{Name: "store fsyncs per job", Unit: "syncs", Value: perJob(before.Fsyncs, after.Fsyncs, jobs), Lower: true},
	}
}

// masterMetrics say how far a fleet of gateways can grow on this store: one Redis master runs
// every command on one thread, so the busiest master's main-thread CPU per job caps the jobs/s
// of any number of gateways at 1 core ÷ that. Also the sum over the masters (what the layout
// costs in all) and each master's share of it, by rank (#1 the busiest). None without a Redis
// store, or when a master is missing from either sample.
func masterMetrics(before, after map[string]time.Duration, jobs int64) []metric {
	if len(after) == 0 || len(before) != len(after) || jobs <= 0 {
		return nil
	}
	var used []time.Duration
	var total time.Duration
	for addr, a := range after {
		b, ok := before[addr]
		if !ok {
			return nil
		}
		used = append(used, a-b)
		total += a - b
	}
	slices.Sort(used)
	slices.Reverse(used)
	perJob := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(jobs) }
	busiest := perJob(used[0])
	ceiling := math.NaN()
	if busiest > 0 {
		ceiling = 1e6 / busiest
	}
	out := []metric{
		{Name: "Redis main thread CPU per job, all masters", Unit: "µs", Value: perJob(total), Lower: true},
		{Name: "Redis main thread CPU per job, busiest master", Unit: "µs", Value: busiest, Lower: true},
		{Name: "fleet ceiling, 1 core ÷ busiest master", Unit: "jobs/s", Value: ceiling},
	}
	for i, d := range used {
		share := math.NaN()
		if total > 0 {
			share = 100 * float64(d) / float64(total)
		}
		out = append(out, metric{Name: "master #" + strconv.Itoa(i+1) + " share of main thread CPU", Unit: "%", Value: share})
	}
	return out
}
