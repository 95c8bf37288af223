package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// How an inventory row becomes a registered tool: the handler constructors
// the inventory names, the one call path of the agent-mail, channels and
// mailbox sets (rawTool), the one error mapper (failureText) and the result
// builders every set answers with.

// toolHandler registers one tool: its handler bound to the set's receiver.
type toolHandler struct {
	in  reflect.Type // the input type (the inventory names it)
	add func(s *mcp.Server, t *mcp.Tool, b binding)
}

// binding is what a set's handlers run on.
type binding struct {
	recv func() any // the set's receiver: *emailHandlers, *amTools, *chTools or *mbTools
	args argStyle   // the set's argument dialect
	set  string
	log  *slog.Logger
}

// registerSet registers the inventory's tools of set (those of only, when
// it is not nil) over the receiver recv returns when a call runs.
func registerSet(s *mcp.Server, set string, recv func() any, log *slog.Logger, only map[string]bool) {
	b := binding{recv: recv, args: toolSets[set].args, set: set, log: log}
	for _, e := range inventory {
		if e.Set == set && (only == nil || only[e.Name]) {
			e.Handler.add(s, e.tool(), b)
		}
	}
}

// emailTool is a typed tool of the email set: its input schema is inferred
// from In (edited by edits, for the bounds struct tags cannot say), and its
// arguments are checked as go-sdk's typed AddTool would (defaults applied,
// then the schema), except that a missing required argument is refused in
// the project's words ("Error: thread_id is required: reply_email needs
// thread_id and body"), not the validator's ("validating root: required:
// missing properties: [\"thread_id\"]").
func emailTool[In any](h func(*emailHandlers, context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error), edits ...func(*jsonschema.Schema)) toolHandler {
	return toolHandler{in: reflect.TypeFor[In](), add: func(s *mcp.Server, t *mcp.Tool, b binding) {
		t = withSchema[In](t, edits...)
		sch := t.InputSchema.(*jsonschema.Schema)
		resolved, err := sch.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			panic(fmt.Sprintf("input schema of %s: %v", t.Name, err)) // a programming error, caught by every test
		}
		s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in In
			if msg := emailArgs(t.Name, sch, resolved, req.Params.Arguments, &in); msg != "" {
				return errorResult(msg), nil
			}
			res, out, err := h(b.recv().(*emailHandlers), withElicitSession(ctx, req.Session), req, in)
			if err != nil {
				var wire *jsonrpc.Error
				if errors.As(err, &wire) {
					return nil, wire
				}
				return errorResult(err.Error()), nil
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
			return res, nil
		})
	}}
}

// emailArgs decodes an email tool's arguments into in ("" when they are
// fine, else the refusal): a missing required argument in the project's
// words, anything else the schema refuses in the validator's.
func emailArgs(tool string, sch *jsonschema.Schema, resolved *jsonschema.Resolved, raw json.RawMessage, in any) string {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return fmt.Sprintf("Error: the arguments of %s are not a JSON object: %v", tool, err)
		}
	}
	for _, name := range sch.Required {
		if _, ok := args[name]; !ok {
			return fmt.Sprintf("Error: %s is required: %s needs %s", name, tool, andList(sch.Required))
		}
	}
	var v any = args // as go-sdk's typed AddTool checks them
	if err := resolved.ApplyDefaults(&v); err != nil {
		return `validating "arguments": applying schema defaults: ` + err.Error()
	}
	if err := resolved.Validate(&v); err != nil {
		return `validating "arguments": ` + err.Error()
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, in)
	}
	if err != nil {
		return err.Error()
	}
	return ""
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
// checked by argDecoder in the set's dialect (any refusal, malformed
// arguments included, is a tool error), the call runs with the MCP session
// (agent-mail binds identities to it), and an error is a tool error worded
// by failureText, except a *jsonrpc.Error, which a contract wants as a
// protocol error (the mailbox set's oversized message, FR-013).
func rawTool[In any](s *mcp.Server, t *mcp.Tool, b binding, call func(context.Context, In) (*mcp.CallToolResult, error)) {
	args := newArgDecoder[In](t, b.args)
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
			return errorResult(failureText(ctx, b.log, t.Name, err)), nil
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

// failureText is the text of a tool error from a handler's error:
// refusals verbatim (they say what to do), a cancelled call as such, and
// anything else as a generic retryable failure with the details in the
// server log.
func failureText(ctx context.Context, log *slog.Logger, tool string, err error) string {
	var e *agentmail.Error
	var local *mbError
	switch {
	case errors.As(err, &e):
		return e.Message
	case errors.As(err, &local):
		return local.msg
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s was cancelled before it finished; nothing is lost, call it again", tool)
	}
	log.ErrorContext(ctx, "tool failed", "tool", tool, "err", err) // with the call's request_id
	return fmt.Sprintf("internal error in %s: the store could not complete the call (details are in the server log); it is safe to retry", tool)
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
	var structured any = json.RawMessage(b)
	if len(b) == 0 || b[0] != '{' {
		structured = map[string]json.RawMessage{"result": b}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}, nil
}

// sentenceResult is an answer whose text is a contract's sentence ("Message
// #12 sent"), with the same facts as structuredContent.
func sentenceResult(text string, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}
