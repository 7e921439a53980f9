// Package backendtest is the conformance suite every backend.Backend runs from its own tests:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
//			return mybackend.New(..., clock)
//		})
//	}
//
// Every case runs in parallel with its own fresh backend and fake clock; time moves only through
// the clock, except in the RealTime group, whose cases run on the store's own clock because what
// they check (a reservation outliving its TTR, a job handed out early) happens only when real
// time passes while sessions overlap. Calls that may block run under a watchdog deadline so that a broken backend fails
// instead of hanging.
package backendtest

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
)

// Epoch is the instant every case's fake clock starts at.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// NewBackend makes a fresh, empty backend for one case, driven by clock (a *clocktest.Fake), or
// by the store's own real time when clock is nil. It registers its own cleanup (t.Cleanup); the
// suite does not call Close.
type NewBackend func(t *testing.T, clock backend.Clock) backend.Backend

// testCase is one rule of the contract; its name is a sentence.
type testCase struct {
	name string
	run  func(h *harness)
}

type group struct {
	name     string
	cases    []testCase
	realTime bool // the backend runs on its own clock: h.clock must not be used
}

// groups is the whole suite, one group per command group, in the order they are reported.
func groups() []group {
	return []group{
		{"Sessions", sessionCases, false},
		{"PutAndPeek", putPeekCases, false},
		{"Reserve", reserveCases, false},
		{"StartReserve", startReserveCases, false},
		{"ReadyFor", readyForCases, false},
		{"ReadyAges", readyAgesCases, false},
		{"DeadlineSoonAndTTR", deadlineCases, false},
		{"ReleaseBuryTouch", releaseBuryTouchCases, false},
		{"Delete", deleteCases, false},
		{"Kick", kickCases, false},
		{"Pause", pauseCases, false},
		{"Stats", statsCases, false},
		{"TubeLifecycle", tubeLifecycleCases, false},
		{"Concurrency", concurrencyCases, false},
		{"Listing", listingCases, false},
		{"Holder", holderCases, false},
		{"Bulk", bulkCases, false},
		{"Import", importCases, false},
		{"Schedules", scheduleCases, false},
		{"RealTime", realTimeCases, true},
	}
}

// Option adjusts Run.
type Option func(*options)

type options struct {
	withoutPolicies bool
	withoutImport   bool
	without         map[string]bool // "Group/Case"
	only            map[string]bool // groups, when set
}

// WithoutPolicies leaves out the policy groups, for a store whose Policies are still
// backend.NoPolicies. Without it, a store answering ErrPolicyUnsupported fails them.
func WithoutPolicies() Option { return func(o *options) { o.withoutPolicies = true } }

// WithoutImport leaves out the Import group, for a store layout that cannot keep imported ids
// yet (it must then refuse Import with an error, never store jobs under other ids silently).
func WithoutImport() Option { return func(o *options) { o.withoutImport = true } }

// OnlyGroups runs only the groups named, for a test of one part of a store layout whose other
// parts another test runs.
func OnlyGroups(names ...string) Option {
	return func(o *options) {
		o.only = map[string]bool{}
		for _, n := range names {
			o.only[n] = true
		}
	}
}

// WithoutCases leaves out the cases named "Group/Case", for a store layout that refuses what
// they need with an error (say why where it is used).
func WithoutCases(names ...string) Option {
	return func(o *options) {
		if o.without == nil {
			o.without = map[string]bool{}
		}
		for _, n := range names {
			o.without[n] = true
		}
	}
}

// Run runs the whole Backend contract against backends made by newBackend.
func Run(t *testing.T, newBackend NewBackend, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	gs := groups()
	if !o.withoutPolicies {
		gs = append(gs, policyGroups()...)
	}
	for _, g := range gs {
		if o.withoutImport && g.name == "Import" || o.only != nil && !o.only[g.name] {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.cases {
				if o.without[g.name+"/"+c.name] {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(newHarness(t, newBackend, g.realTime))
				})
			}
		})
	}
}
