# mailgate — see README.md. `make run` shows it working on the sandbox
# mailbox; `make test` runs every test, race detector on.

SHELL    := /bin/bash
GO       ?= go
BIN      := bin/mailgate
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
NODE_DIR := .ci/node_modules

.PHONY: build run test test-go test-pg test-clients tools bench fuzz lint clean conformance

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/mailgate

# The demo starts `mailgate serve --sandbox` in a throwaway home and walks
# search → read → draft → send (rejected) → approve → send → Done/.
run: build
	./$(BIN) demo

test: lint test-go test-pg test-clients

lint:
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-go: build
	MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m ./...

# The store suites again on PostgreSQL, and the fleet test (three servers on
# one database): on the database MAILGATE_TEST_POSTGRES names, else on a
# throwaway cluster on loopback (.ci/pgtest.sh; needs Debian's postgresql).
PG_PACKAGES := ./internal/store/... ./internal/agentmail/... ./internal/ratelimit ./internal/approval \
	./internal/gate ./internal/mirror ./internal/mcpserver ./cmd/mailgate-load
test-pg: build
	@set -eo pipefail; url="$$MAILGATE_TEST_POSTGRES"; \
	if [ -z "$$url" ]; then url=$$(.ci/pgtest.sh start 55433); trap '.ci/pgtest.sh stop 55433' EXIT; fi; \
	echo "PostgreSQL suites on $${url%%\?*}"; \
	MAILGATE_TEST_POSTGRES="$$url" MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m $(PG_PACKAGES); \
	MAILGATE_TEST_POSTGRES="$$url" MAILGATE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m -run 'TestGate|TestMultiServer' -v ./cmd/mailgate 2>&1 \
		| grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|multiserver_test|gate_procs_test' 

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

# Long fuzz runs of every parser that reads what a human or an agent wrote.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseApproval$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzParseAddress$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzBuild$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzHTMLToText$$' -fuzztime $(FUZZTIME) ./internal/mailmsg
	$(GO) test -run '^$$' -fuzz '^FuzzRequestRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/approval
	$(GO) test -run '^$$' -fuzz '^FuzzSanitizeQuery$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzPatternOverlap$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzSummarize$$' -fuzztime $(FUZZTIME) ./internal/agentmail
	$(GO) test -run '^$$' -fuzz '^FuzzTsquery$$' -fuzztime $(FUZZTIME) ./internal/agentmail/postgres
	$(GO) test -run '^$$' -fuzz '^FuzzParseQuery$$' -fuzztime $(FUZZTIME) ./internal/localgmail
	$(GO) test -run '^$$' -fuzz '^FuzzParseMessage$$' -fuzztime $(FUZZTIME) ./internal/localgmail
	$(GO) test -run '^$$' -fuzz '^FuzzHTTPFrontDoor$$' -fuzztime $(FUZZTIME) ./internal/httpserver

clean:
	rm -rf bin $(NODE_DIR)
