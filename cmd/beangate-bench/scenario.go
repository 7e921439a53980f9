package main

import "fmt"

// scenario measures one round against one server and returns its figures; any error (including
// a failed exactly-once check) fails the whole run.
type scenario func(r *round) ([]metric, error)

var scenarios = map[string]scenario{
	"put":          runPut,
	"cycle":        runCycle,
	"tubes":        runTubes,
	"drain":        runDrain,
	"reserve-wait": runReserveWait,
	"delayed":      runDelayed,
	"open-loop":    runOpenLoop,
	"conns":        runConns,
}

// runRound runs the scenario and then the end-of-round checks.
func runRound(s scenario, r *round, checkJobs bool) ([]metric, error) {
	metrics, err := s(r)
	r.fail(err)
	r.closeAll()
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.target.Name, err)
	}
	if checkJobs {
		if err := r.finish(); err != nil {
			return nil, fmt.Errorf("%s: %w", r.target.Name, err)
		}
	}
	return metrics, nil
}
