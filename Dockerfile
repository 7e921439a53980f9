# beangate's container image: the static binary that `make image` builds, on an empty base.
# Build it with `make image` (beangate:dev), which puts the binary, the build host's CA bundle,
# LICENSE and an empty data directory into the build context; Dockerfile.source builds from
# source instead, in a Go image.
#
#   docker run -p 11300:11300 -p 9110:9110 beangate:dev -l 0.0.0.0 --metrics-http 0.0.0.0:9110
#   docker run -v beangate-data:/data -p 11300:11300 beangate:dev -l 0.0.0.0 -b /data
#   docker run -e BEANGATE_BACKEND=redis://redis:6379/0 -p 11300:11300 beangate:dev -l 0.0.0.0
#
# By default it listens on loopback, like the binary: inside a container that reaches nothing,
# so publishing the port takes `-l 0.0.0.0` (no authentication unless --auth-token-file: a
# deliberate choice).
FROM scratch

ARG VERSION=""
ARG REVISION=""
LABEL org.opencontainers.image.title="beangate" \
      org.opencontainers.image.description="beanstalkd-compatible work queue gateway on memory, Redis or PostgreSQL" \
      org.opencontainers.image.source="https://github.com/beangate/beangate" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

# For rediss:// and TLS to PostgreSQL.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY LICENSE /LICENSE
# The binlog directory for -b /data, writable by the image's user; a named volume mounted here
# starts as a copy of it, ownership included.
COPY --chown=65532:65532 data /data
COPY beangate /beangate

# Not root: 65532 is the usual "nonroot" of distroless images.
USER 65532:65532
VOLUME /data
# 11300: the beanstalk protocol. 9110: the metrics listener (/metrics, /healthz, /readyz; never
# the console), on loopback unless --metrics-http (or BEANGATE_METRICS_HTTP) says otherwise.
EXPOSE 11300 9110
ENV BEANGATE_METRICS_HTTP=127.0.0.1:9110

# No shell in the image: `beangate healthcheck` GETs /readyz from the listener the server's own
# options name (it reads them from process 1). 503 while the store is unreachable or the
# gateway drains or stops; the start period covers a long binlog replay or a store not up yet.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/beangate", "healthcheck"]

# SIGTERM: /readyz turns 503, --shutdown-delay passes, running commands finish and
# reservations return within --shutdown-timeout (10s by default), then exit 0. Give `docker
# stop -t` / stop_grace_period more than their sum (docker's default is 10s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/beangate"]
