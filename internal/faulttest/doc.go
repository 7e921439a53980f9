// Package faulttest runs the store's own failures for tests: private redis-servers (a master,
// a replica and three sentinels, or a Redis Cluster of masters and their replicas), a private PostgreSQL primary with a streaming standby, silent
// network cuts and slow links on loopback, and a ledger of every reply a fleet of gateways
// acknowledged, checked at the end for jobs lost, jobs back after their delete, and deliveries
// no expired TTR or dead holder explains.
//
// Everything binds loopback ports a test names (each fault test its own block), runs as child
// processes of the test, and is stopped when the test ends. A server binary or tool that is
// missing makes the test fail with CI=true and skip elsewhere (backendtest.Unavailable).
package faulttest
