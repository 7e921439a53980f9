# Builds what beangate ships, from the working tree, the same way for a person and for CI:
#   make build     bin/beangate for this machine
#   make image     the container image beangate:dev (Dockerfile: the binary on an empty base)
#   make release   dist/: an archive per platform (binary, LICENSE, README.md, CHANGELOG.md and
#                  docs/, which README.md links to, example configs and the systemd unit) and
#                  SHA256SUMS
# Every binary is static (CGO_ENABLED=0) and built with -trimpath; `beangate -v` says which
# version and commit it is.

GO ?= go
DOCKER ?= docker
IMAGE ?= beangate:dev
# The image's platform: this machine's by default (make image IMAGE_ARCH=arm64 for another).
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64
DIST ?= dist
# The build host's CA bundle goes into the image, for rediss:// and TLS to PostgreSQL.
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt

# The version: `git describe` from the last vX.Y.Z tag (v1.2.0, v1.2.0-3-gabc1234-dirty); with
# no tag, the pseudo-version Go gives an untagged commit (v0.0.0-20260102150405-abcdef123456).
# The commit and its date (not the build's: two builds of one commit are the same) come from
# git too. Outside a git checkout all three stay empty and the Go build info speaks instead.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || \
	{ d=$$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S 2>/dev/null) && \
	  h=$$(git rev-parse --short=12 HEAD) && \
	  echo "v0.0.0-$$d-$$h$$(test -z "$$(git status --porcelain)" || echo +dirty)"; })
endif
ifeq ($(origin COMMIT),undefined)
COMMIT := $(shell h=$$(git rev-parse HEAD 2>/dev/null) && \
	echo "$$h$$(test -z "$$(git status --porcelain)" || echo -dirty)")
endif
ifeq ($(origin COMMIT_DATE),undefined)
COMMIT_DATE := $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
endif

LDFLAGS := -s -w $(if $(VERSION),-X main.version=$(VERSION)) \
	$(if $(COMMIT),-X main.commit=$(COMMIT)) $(if $(COMMIT_DATE),-X main.commitDate=$(COMMIT_DATE))
# -buildvcs=auto: the Go build info records the commit wherever git can tell it, whatever
# GOFLAGS says.
GOBUILD = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)'

IMAGE_CONTEXT := bin/image
RELEASE_NAME = beangate_$(subst +,-,$(or $(VERSION),dev))

.PHONY: build image release clean

build:
	$(GOBUILD) -o bin/beangate ./cmd/beangate

# The image holds only what its context holds: the binary, the CA bundle, LICENSE and an empty
# /data for -b (owned by the image's user).
image:
	rm -rf $(IMAGE_CONTEXT)
	mkdir -p $(IMAGE_CONTEXT)/data
	GOOS=linux GOARCH=$(IMAGE_ARCH) $(GOBUILD) -o $(IMAGE_CONTEXT)/beangate ./cmd/beangate
	cp $(CA_CERTS) $(IMAGE_CONTEXT)/ca-certificates.crt
	cp LICENSE $(IMAGE_CONTEXT)/LICENSE
	$(DOCKER) build -f Dockerfile -t $(IMAGE) \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(COMMIT) $(IMAGE_CONTEXT)

release:
	rm -rf $(DIST)
	set -e; for platform in $(PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		name=$(RELEASE_NAME)_$${os}_$${arch}; stage=$(DIST)/$$name; \
		mkdir -p $$stage/systemd; \
		GOOS=$$os GOARCH=$$arch $(GOBUILD) -o $$stage/beangate ./cmd/beangate; \
		cp LICENSE README.md CHANGELOG.md configs/*.example.yaml $$stage/; \
		cp -R docs $$stage/docs; \
		cp configs/systemd/beangate.service $$stage/systemd/; \
		tar -C $(DIST) --sort=name --owner=0 --group=0 --numeric-owner \
			$(if $(COMMIT_DATE),--mtime=$(COMMIT_DATE)) -cf - $$name | gzip -n > $(DIST)/$$name.tar.gz; \
		rm -rf $$stage; \
	done
	cd $(DIST) && sha256sum *.tar.gz > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

clean:
	rm -rf bin $(DIST)
