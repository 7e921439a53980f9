// Package ops is what an operator runs a fleet of gateways with: the ops HTTP listener
// (/healthz, /readyz, /metrics), the Prometheus metrics of the gateway, its store and its
// backend calls, readiness, and the reloadable TLS certificates and auth tokens of the
// beanstalk listener. Package gateway knows none of it beyond its Observer interface.
//
// Every metric is named beangate_*, in base units (seconds, bytes), counters ending in _total.
// No job body, token or URL with a password ever appears in a metric.
package ops
