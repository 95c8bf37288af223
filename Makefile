# mailgate — see README.md. `make run` shows it working on the sandbox
# mailbox; `make test` runs every test, race detector on.

SHELL    := /bin/bash
GO       ?= go
BIN      := bin/mailgate
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
NODE_DIR := .ci/node_modules

.PHONY: build run deps test test-go test-pg test-clients tools bench bench-peers fuzz lint clean conformance dist check-install check-goline

# Built as the release binaries are (dist): without cgo, static, so a start
# loads no dynamic loader or C library (BENCHMARKS.md, start-up).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/mailgate

# The demo starts `mailgate serve --sandbox` in a throwaway home and walks
# search → read → draft → send and reply (each refused, approved, sent once)
# → Done/ → the audit log; `bin/mailgate demo --keep` keeps the home.
run: build
	./$(BIN) demo

# make run needs only Go. make test also needs tmux, PostgreSQL's server
# binaries, curl, git, Node and npm (.ci/test-packages): deps installs them
# through apt-get when it may (root, or sudo without a password), or stops
# before any test with the one command that does.
test: deps lint test-go test-pg test-clients

deps:
	.ci/deps.sh

lint:
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# make test runs the stress, crash and leak suites at full size
# (MAILGATE_TEST_FULL=1: 24 crash cycles, 8 processes × 500 sends, 50
# SIGKILLs, ...); a plain `go test ./...` runs the same tests smaller, for a
# quick edit-test loop (testutil.Size).
test-go: build
	MAILGATE_TEST_FULL=1 MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m ./...

# The store suites again on PostgreSQL, and the fleet test (three servers on
# one database): on the database MAILGATE_TEST_POSTGRES names, else on a
# throwaway cluster on loopback (.ci/pgtest.sh; needs Debian's postgresql).
PG_PACKAGES := ./internal/store/... ./internal/agentmail/... ./internal/ratelimit ./internal/approval \
	./internal/gate ./internal/mirror ./internal/mcpserver ./internal/presence ./internal/drafts ./internal/schedule ./cmd/mailgate-load
test-pg: build
	@set -eo pipefail; url="$$MAILGATE_TEST_POSTGRES"; \
	if [ -z "$$url" ]; then url=$$(.ci/pgtest.sh start 55433); trap '.ci/pgtest.sh stop 55433' EXIT; fi; \
	echo "PostgreSQL suites on $${url%%\?*}"; \
	MAILGATE_TEST_FULL=1 MAILGATE_TEST_POSTGRES="$$url" MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m $(PG_PACKAGES); \
	MAILGATE_TEST_FULL=1 MAILGATE_TEST_POSTGRES="$$url" MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m -run 'TestGate|TestMultiServer|TestGuard' -v ./cmd/mailgate 2>&1 \
		| grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|multiserver_test|gate_procs_test|guard_test|crash_suite_test' 

# External MCP clients (MCP Inspector CLI, TypeScript SDK) against the built binary.
test-clients: build tools
	MAILGATE_BIN=$(CURDIR)/$(BIN) MAILGATE_CLIENTS=$(CURDIR)/$(NODE_DIR) $(GO) test -count=1 -run 'TestExternalClients|TestHTTPConformance|TestHTTPExternalClients' ./cmd/mailgate -v

tools: $(NODE_DIR)/.installed

$(NODE_DIR)/.installed: .ci/package.json .ci/package-lock.json
	npm ci --prefix .ci --no-audit --no-fund
	touch $@

# The official MCP conformance suite against serve --http (also run by test-clients).
conformance: tools
	.ci/conformance.sh

bench: build
	MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

# The mailbox set against the four-tool server it replaces, side by side in
# one tmux server: PEER_AGENTMAIL=/path/to/agentmail (go build ./cmd/agentmail
# in a checkout of github.com/UserAd/AgentMail); without it, mailgate alone.
bench-peers: build
	$(GO) run ./cmd/mailgate-bench -mailgate $(BIN) -calls 1000

# Long fuzz runs of every parser that reads what a human or an agent wrote.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseApproval$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzParseAddress$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzBuild$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzHTMLToText$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzRequestRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzRequestListsRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzOriginalRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzAccountRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzValidName$$' -fuzztime $(FUZZTIME) ./internal/account
	$(GO) test -run '^$$' -fuzz '^FuzzWarnings$$' -fuzztime $(FUZZTIME) ./internal/warnings
	$(GO) test -run '^$$' -fuzz '^FuzzSearchQuery$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzPatternOverlap$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzSummarize$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzParseMailboxLine$$' -fuzztime $(FUZZTIME) ./internal/agentmail/mailboxset
	$(GO) test -run '^$$' -fuzz '^FuzzAttachmentPath$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzProjectTree$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzReservablePaths$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzTsquery$$' -fuzztime $(FUZZTIME) ./internal/agentmail/postgres
	$(GO) test -run '^$$' -fuzz '^FuzzQueuedMayMatch$$' -fuzztime $(FUZZTIME) ./internal/agentmail/sqlite
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeLine$$' -fuzztime $(FUZZTIME) ./internal/mcpstdio
	$(GO) test -run '^$$' -fuzz '^FuzzReach$$' -fuzztime $(FUZZTIME) ./internal/mcpserver
	$(GO) test -run '^$$' -fuzz '^FuzzOrganiseInputs$$' -fuzztime $(FUZZTIME) ./internal/mcpserver
	$(GO) test -run '^$$' -fuzz '^FuzzAuthorize$$' -fuzztime $(FUZZTIME) ./internal/httpserver
	$(GO) test -run '^$$' -fuzz '^FuzzParseQuery$$' -fuzztime $(FUZZTIME) ./internal/localgmail
	$(GO) test -run '^$$' -fuzz '^FuzzParseMessage$$' -fuzztime $(FUZZTIME) ./internal/localgmail
	$(GO) test -run '^$$' -fuzz '^FuzzPageToken$$' -fuzztime $(FUZZTIME) ./internal/localgmail
	$(GO) test -run '^$$' -fuzz '^FuzzWriteSetting$$' -fuzztime $(FUZZTIME) ./internal/config
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./internal/config
	$(GO) test -run '^$$' -fuzz '^FuzzEncodeHeaderValue$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzSanitizeFilename$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/unsubscribe
	$(GO) test -run '^$$' -fuzz '^FuzzParseDraft$$' -fuzztime $(FUZZTIME) ./internal/mcpserver
	$(GO) test -run '^$$' -fuzz '^FuzzRenderBody$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzAttachmentName$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzNamesAndKeys$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzDigest$$' -fuzztime $(FUZZTIME) ./internal/archive
	$(GO) test -run '^$$' -fuzz '^FuzzHTTPFrontDoor$$' -fuzztime $(FUZZTIME) ./internal/httpserver
	$(GO) test -run '^$$' -fuzz '^FuzzMergeMCPServers$$' -fuzztime $(FUZZTIME) ./cmd/mailgate
	$(GO) test -run '^$$' -fuzz '^FuzzMergeCodex$$' -fuzztime $(FUZZTIME) ./cmd/mailgate
	$(GO) test -run '^$$' -fuzz '^FuzzFollowerLines$$' -fuzztime $(FUZZTIME) ./internal/tmux
	$(GO) test -run '^$$' -fuzz '^FuzzRemoteResources$$' -fuzztime $(FUZZTIME) ./internal/approvalweb

# Release binaries for every platform README lists, with SHA-256 checksums.
# The store is pure Go (modernc.org/sqlite), so every target cross-compiles
# without cgo.
DIST_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
dist:
	@set -e; rm -rf dist; mkdir -p dist; \
	for t in $(DIST_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		out=dist/mailgate_$(VERSION)_$${os}_$${arch}$$ext; \
		echo "building $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$out ./cmd/mailgate; \
	done; \
	cd dist && sha256sum mailgate_* > SHA256SUMS && cat SHA256SUMS

# The go line of go.mod is the oldest Go that builds mailgate: build with
# exactly that toolchain (fetched through the module proxy).
check-goline:
	@v=$$(sed -n 's/^go //p' go.mod); echo "building with go$$v (the go line of go.mod)"; \
	GOTOOLCHAIN=go$$v $(GO) build -o /dev/null ./cmd/mailgate && GOTOOLCHAIN=go$$v $(GO) version

# README's install line (go install …@latest) from a clean module cache.
check-install:
	.ci/goinstall.sh

clean:
	rm -rf bin dist $(NODE_DIR)
