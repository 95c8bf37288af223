package httpserver

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/mailgate/mailgate/internal/mcpstdio"
)

// A JSON-RPC object with an id but no method is an invalid request, which
// JSON-RPC 2.0 answers with -32600. go-sdk reads any object without a
// method as a response to one of its own calls and, when none has that id,
// drops it and answers 202 Accepted: the client waits for an answer that
// never comes. noMethodGuard keeps the head of each POST body and, when
// go-sdk is about to answer 202, answers 400 with -32600 instead if the body
// was such an object. Only small bodies are kept (a request without a method
// is small); larger ones pass through unchecked.

const noMethodProbeBytes = 64 << 10

// noMethodGuard wraps a POST: its Body keeps a copy of the first bytes read
// and its writer intercepts a 202.
type noMethodGuard struct {
	http.ResponseWriter
	head      []byte
	overflow  bool
	swallowed bool // the 202 was replaced: drop go-sdk's body
	decided   bool
}

func guardNoMethod(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		return w, r
	}
	g := &noMethodGuard{ResponseWriter: w}
	r.Body = &probeBody{ReadCloser: r.Body, g: g}
	return g, r
}

type probeBody struct {
	io.ReadCloser
	g *noMethodGuard
}

func (b *probeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.g.overflow {
		if len(b.g.head)+n > noMethodProbeBytes {
			b.g.overflow, b.g.head = true, nil
		} else {
			b.g.head = append(b.g.head, p[:n]...)
		}
	}
	return n, err
}

func (g *noMethodGuard) WriteHeader(code int) {
	if !g.decided {
		g.decided = true
		if code == http.StatusAccepted && !g.overflow {
			if id, bad := mcpstdio.NoMethodRequest(g.head); bad {
				g.swallowed = true
				var v any = nil
				if len(id) > 0 {
					v = id
				}
				g.ResponseWriter.Header().Set("Content-Type", "application/json")
				g.ResponseWriter.Header().Set("Cache-Control", "no-store")
				g.ResponseWriter.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(g.ResponseWriter).Encode(errorBody{JSONRPC: "2.0", ID: v,
					Error: errorDetail{Code: codeInvalidRequest, Message: "Invalid Request: no method"}})
				return
			}
		}
	}
	if !g.swallowed {
		g.ResponseWriter.WriteHeader(code)
	}
}

func (g *noMethodGuard) Write(p []byte) (int, error) {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	if g.swallowed {
		return len(p), nil
	}
	return g.ResponseWriter.Write(p)
}

func (g *noMethodGuard) Flush() {
	if !g.swallowed {
		http.NewResponseController(g.ResponseWriter).Flush()
	}
}

func (g *noMethodGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }
