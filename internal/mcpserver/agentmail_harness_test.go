package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// amHarness is a mailgate server with only the agent-mail tool set, on a
// fresh store in a temporary directory, and a real MCP client connected to
// it in-process, speaking protocol 2025-11-25 (Claude Desktop's).
type amHarness struct {
	t    testing.TB
	ctx  context.Context
	cs   *mcp.ClientSession
	svc  *agentmail.Service
	db   *store.DB
	path string
}

func newAMHarness(t testing.TB, opts ...func(*agentmail.Options)) *amHarness {
	t.Helper()
	return newAMHarnessAt(t, amtest.DSN(t), opts...)
}

// newAMHarnessClocked is newAMHarness on a fake clock the test moves.
func newAMHarnessClocked(t testing.TB) (*amHarness, *testutil.Clock) {
	t.Helper()
	clock := newFakeClock()
	return newAMHarness(t, func(o *agentmail.Options) { o.Now = clock.Now }), clock
}

// newAMHarnessAt is newAMHarness on an existing (or new) store: a SQLite
// file or, when the run is on PostgreSQL (storetest), a schema's URL.
func newAMHarnessAt(t testing.TB, path string, opts ...func(*agentmail.Options)) *amHarness {
	t.Helper()
	svc, db := openService(t, path, opts...)
	h := &amHarness{t: t, ctx: context.Background(), svc: svc, db: db, path: path}
	h.cs = connectAM(t, svc)
	return h
}

// openService opens a Service on the store at path, a SQLite file or a
// PostgreSQL URL (a second call with the same path is a second "process" on
// the same store). Both close when the test ends.
func openService(t testing.TB, path string, opts ...func(*agentmail.Options)) (*agentmail.Service, *store.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var o agentmail.Options
	for _, f := range opts {
		f(&o)
	}
	svc, st, err := amstore.NewServiceStore(ctx, db, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() }) // before the DB's: it stops the indexer
	compatStores.Store(svc, st)
	return svc, db
}

// connectAM starts a server over svc and returns a connected client session.
func connectAM(t testing.TB, svc *agentmail.Service) *mcp.ClientSession {
	t.Helper()
	return connectCompat(t, svc, []string{config.ToolsAgentMail}, SetOptions{}).cs
}

// callRaw calls a tool and decodes its answer the way reference clients do
// (the JSON in the single text content). It also checks that
// structuredContent carries the same answer (as is, or as {"result": …}).
func (h *amHarness) callRaw(name string, args map[string]any) (v any, errText string, isErr bool, err error) {
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, "", false, err
	}
	if len(res.Content) != 1 {
		h.t.Errorf("%s: %d content items, want 1", name, len(res.Content))
		return nil, "", res.IsError, nil
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return nil, text, true, nil
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		h.t.Errorf("%s: answer is not JSON: %v\n%s", name, err, text)
		return nil, "", false, nil
	}
	var sc any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	want := v
	if _, isObj := v.(map[string]any); !isObj {
		want = map[string]any{"result": v}
	}
	if !reflect.DeepEqual(sc, want) {
		h.t.Errorf("%s: structuredContent %s does not match the text content %s", name, b, text)
	}
	return v, "", false, nil
}

// call calls a tool that must succeed and decodes the answer into out.
func (h *amHarness) call(name string, args map[string]any, out any) {
	h.t.Helper()
	v, errText, isErr, err := h.callRaw(name, args)
	if err != nil || isErr {
		h.t.Fatalf("%s(%v): err=%v tool error=%q", name, args, err, errText)
	}
	if out != nil {
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s: decoding %s: %v", name, b, err)
		}
	}
}

// callErr calls a tool that must answer with a tool error, and returns it.
func (h *amHarness) callErr(name string, args map[string]any) string {
	h.t.Helper()
	_, errText, isErr, err := h.callRaw(name, args)
	if err != nil {
		h.t.Fatalf("%s: protocol error %v (refusals must be tool errors)", name, err)
	}
	if !isErr {
		h.t.Fatalf("%s(%v): succeeded, want a tool error", name, args)
	}
	return errText
}

// readRaw reads a resource and decodes its JSON text.
func (h *amHarness) readRaw(uri string) (v any, errText string, isErr bool, err error) {
	res, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, "", false, err
	}
	if len(res.Contents) != 1 {
		h.t.Errorf("%s: %d contents, want 1", uri, len(res.Contents))
		return nil, "", false, nil
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &v); err != nil {
		h.t.Errorf("%s: not JSON: %v", uri, err)
	}
	return v, "", false, nil
}

// read reads a resource that must exist into out.
func (h *amHarness) read(uri string, out any) {
	h.t.Helper()
	v, _, _, err := h.readRaw(uri)
	if err != nil {
		h.t.Fatalf("reading %s: %v", uri, err)
	}
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, out); err != nil {
		h.t.Fatalf("decoding %s: %v", uri, err)
	}
}
