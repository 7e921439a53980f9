// Package deploy has no code: its tests check the deployment files of beangate against the
// server they deploy. The Kubernetes manifests (kubernetes/) decode strictly into the API types
// and their probes, ports and timings agree with the options each container passes; the
// Compose file (compose/) validates and refers to files that exist; the systemd unit
// (../configs/systemd) passes systemd-analyze verify; and, given an image built with
// `make image` and archives built with `make release` (BEANGATE_TEST_IMAGE and
// BEANGATE_TEST_RELEASE, set by .ci/image-test), the image serves, persists, stops gracefully
// and runs as its non-root user, and the archives hold a static binary that says what it is.
// A module of its own, so that the main module does not depend on the Kubernetes API.
package deploy
