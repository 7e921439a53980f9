// Package gatewaytest holds the wire-level test suites that every backend runs through a real
// gateway.Server over TCP: exact-byte transcripts (RunTranscripts), the multi-gateway suite for
// shared stores (RunMultiGateway), and the helpers they share. The transcripts are also played
// against a real beanstalkd by the differential test, so their expected bytes are the real
// server's.
package gatewaytest
