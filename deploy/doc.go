// Package deploy has no code: its tests check the deployment files of beangate against the
// server they deploy. The Kubernetes manifests (kubernetes/) decode strictly into the API types
// and their probes, ports and timings agree with the options each container passes; the
// Compose file (compose/) validates and refers to files that exist; the systemd unit
// (../configs/systemd) passes systemd-analyze verify; and, given an image built with
// `make image` (BEANGATE_TEST_IMAGE, set by .ci/image-test), the image serves, persists, stops
// gracefully and runs as its non-root user. A module of its own, so that the main module does
// not depend on the Kubernetes API.
package deploy
