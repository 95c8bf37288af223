package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// How an inventory row becomes a registered tool: the handler constructors
// the inventory names, the one call path of the agent-mail, channels and
// mailbox sets (rawTool), the one error mapper (agentmail.FailureText) and the result
// builders every set answers with.

// toolHandler registers one tool: its handler bound to the set's receiver.
type toolHandler struct {
	in  reflect.Type // the input type (the inventory names it)
	add func(s *mcp.Server, t *mcp.Tool, b binding)
}

// binding is what a set's handlers run on.
type binding struct {
	recv func() any // the set's receiver: *emailHandlers, *amTools, *chTools or *mbTools
	args argStyle   // how the set words argument errors
	set  string
	log  *slog.Logger
	adv  *advertised // the server's advertised schemas (advertise.go)
}

// registerSet registers the inventory's tools of set (those of only, when
// it is not nil) over the receiver recv returns when a call runs.
func registerSet(s *mcp.Server, adv *advertised, set string, recv func() any, log *slog.Logger, only map[string]bool) {
	b := binding{recv: recv, args: toolSets[set].args, set: set, log: log, adv: adv}
	for _, e := range inventory {
		if e.Set == set && (only == nil || only[e.Name]) {
			e.Handler.add(s, e.tool(), b)
		}
	}
}

// addTool registers t with h on s (the one place tools are registered),
// through a stand-in when its schemas are generated JSON without header
// annotations (advertise.go).
func (a *advertised) addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) {
	in, isRaw := t.InputSchema.(json.RawMessage)
	_, outRaw := t.OutputSchema.(json.RawMessage)
	if !isRaw || (t.OutputSchema != nil && !outRaw) || bytes.Contains(in, []byte(`"x-mcp-header"`)) {
		s.AddTool(t, h)
		return
	}
	a.schemas[t.Name] = toolSchemaPair{in: t.InputSchema, out: t.OutputSchema}
	registered := *t
	registered.InputSchema, registered.OutputSchema = standInSchema, nil
	s.AddTool(&registered, h)
}

// emailTool is a tool of the email set: its arguments are checked by the
// one argument decoder, in the email set's words (argsEmail), with the
// row's schema edits (the bounds struct tags cannot say); the handler
// builds its own text answer, and the keys the tool does not take, which
// the contract's schemas allow, are ignored and named at its end.
func emailTool[In any](h func(*emailHandlers, context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error), edits ...func(*jsonschema.Schema)) toolHandler {
	return toolHandler{in: reflect.TypeFor[In](), add: func(s *mcp.Server, t *mcp.Tool, b binding) {
		args := newArgDecoder[In](t, b.args, edits...)
		b.adv.addTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in, ignored, err := args.decodeKeys(req.Params.Arguments)
			if err != nil {
				return noteIgnored(errorResult(err.Error()), t.Name, ignored), nil
			}
			ctx = withAccount(ctx, in) // the account argument every email tool takes (email_gmail.go)
			res, out, err := h(b.recv().(*emailHandlers), withElicitSession(ctx, req.Session), req, in)
			if err != nil {
				var wire *jsonrpc.Error
				if errors.As(err, &wire) {
					return nil, wire
				}
				res = errorResult(err.Error())
			}
			if res == nil {
				res = &mcp.CallToolResult{}
			}
			if out != nil {
				raw, err := json.Marshal(out)
				if err != nil {
					return nil, fmt.Errorf("marshaling output: %w", err)
				}
				res.StructuredContent = json.RawMessage(raw)
				if res.Content == nil {
					res.Content = []mcp.Content{&mcp.TextContent{Text: string(raw)}}
				}
			}
			return noteIgnored(res, t.Name, ignored), nil
		})
	}}
}

// noteIgnored ends res's text with the arguments tool ignored, so an agent
// that passed a key by mistake (a misspelt one, say) learns it had no
// effect.
func noteIgnored(res *mcp.CallToolResult, tool string, ignored []string) *mcp.CallToolResult {
	if len(ignored) == 0 {
		return res
	}
	note := fmt.Sprintf("Note: %s does not take %s; ignored.", tool, andList(quoteAll(ignored)))
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc.Text = strings.TrimRight(tc.Text, "\n") + "\n\n" + note
			return res
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: note})
	return res
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

// typedTool is a tool whose answer is one JSON object (Out). Its output
// schema is advertised; the answer is not re-validated against it: it is
// this package's own typed struct, and validating it cost a quarter of a
// send_message call.
func typedTool[In, R, Out any](call func(R, context.Context, In) (Out, error)) toolHandler {
	h := resultTool[In](answerJSON(call))
	add := h.add
	h.add = func(s *mcp.Server, t *mcp.Tool, b binding) {
		t.OutputSchema = outputSchema[Out](b.set, t.Name)
		add(s, t, b)
	}
	return h
}

// jsonTool is a tool whose answer is any JSON value (no output schema).
func jsonTool[In, R any](call func(R, context.Context, In) (any, error)) toolHandler {
	return resultTool[In](answerJSON(call))
}

// answerJSON makes a handler returning a value one answering it as JSON.
func answerJSON[R, In, Out any](call func(R, context.Context, In) (Out, error)) func(R, context.Context, In) (*mcp.CallToolResult, error) {
	return func(r R, ctx context.Context, in In) (*mcp.CallToolResult, error) {
		v, err := call(r, ctx, in)
		if err != nil {
			return nil, err
		}
		return jsonResult(v)
	}
}

// resultTool is a tool whose handler builds its answer itself.
func resultTool[In, R any](call func(R, context.Context, In) (*mcp.CallToolResult, error)) toolHandler {
	return toolHandler{in: reflect.TypeFor[In](), add: func(s *mcp.Server, t *mcp.Tool, b binding) {
		rawTool(s, t, b, func(ctx context.Context, in In) (*mcp.CallToolResult, error) { return call(b.recv().(R), ctx, in) })
	}}
}

// rawTool registers a tool with go-sdk's raw AddTool: its arguments are
// checked by argDecoder in the set's style (any refusal, malformed
// arguments included, is a tool error), the call runs with the MCP session
// (agent-mail binds identities to it), and an error is a tool error worded
// by agentmail.FailureText, except a *jsonrpc.Error, which a contract wants as a
// protocol error (the mailbox set's oversized message, FR-013).
func rawTool[In any](s *mcp.Server, t *mcp.Tool, b binding, call func(context.Context, In) (*mcp.CallToolResult, error)) {
	args := newArgDecoder[In](t, b.args)
	b.adv.addTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := args.decode(req.Params.Arguments)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		res, err := call(withSession(ctx, req.Session), in)
		if err != nil {
			var wire *jsonrpc.Error
			if errors.As(err, &wire) {
				return nil, wire
			}
			return errorResult(agentmail.FailureText(ctx, b.log, t.Name, err)), nil
		}
		return res, nil
	})
}

// outputSchema is the advertised output schema of a set's tool answering
// Out: generated (toolschemas.json) or, while generating, inferred.
func outputSchema[Out any](set, tool string) any {
	key := "out/" + set + "/" + tool
	if raw, ok := toolSchema(key); ok {
		return raw
	}
	out, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", tool, err)) // a programming error, caught by every test
	}
	sch := explicitAny(out)
	schemaBuilt(key, sch)
	return sch
}

// The result builders every set answers with.

// textResult is a plain successful answer.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// errorResult is a refusal or failure the agent should read (isError: true),
// as opposed to a protocol error.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// jsonResult is an answer whose text is the JSON value v (as the reference
// servers send it). structuredContent is v when it is an object and
// {"result": v} otherwise, because protocol 2025-11-25 clients expect an
// object there.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding answer: %w", err)
	}
	structured := json.RawMessage(b)
	if len(b) == 0 || b[0] != '{' {
		// {"result": v}, written as json.Marshal writes it (b is its
		// output), so that it stays JSON encodeOnce need not re-encode.
		structured = make(json.RawMessage, 0, len(b)+len(`{"result":}`))
		structured = append(append(append(structured, `{"result":`...), b...), '}')
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}, nil
}

// sentenceResult is an answer whose text is a contract's sentence ("Message
// #12 sent"), with the same facts as structuredContent.
func sentenceResult(text string, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}
