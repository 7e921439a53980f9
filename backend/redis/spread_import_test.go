package redis_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// Imports keeping ids in the spread layout, on a real cluster of three masters: the
// conformance suite's Import group, whose ids (made elsewhere) mostly name other buckets than
// their tubes', so that each is found through its forwarding entry. Two cases expect the
// one-slot layout's sequence (a put right after an import gets the highest imported id + 1, a
// put into an empty namespace id 1); here a bucket's ids are seq × 1024 + bucket, and
// TestMigrateOneSlotNamespaceToSpread (cmd/beangate) checks what the spread layout promises
// instead: no new id is ever an imported one.
func TestSpreadImport(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
		return c.newSpreadBackend(t, newClusterPrefix(t), "", clock, 0)
	}, backendtest.OnlyGroups("Import"), backendtest.WithoutCases(
		"Import/TheIdSequenceMovesPastTheHighestImportedId",
		"Import/BuriedJobsKeepTheOrderGiven"))
}
