// Package mcpserver builds mailgate's MCP server: the inventory of every
// tool set's tools (inventory.go), the one call path and argument check
// (toolcall.go, toolargs.go) and the policy middleware every call passes
// through. The tools are thin adapters over the packages that do the work
// (gmail, gate, agentmail, channels, mailboxset, …), which know nothing of
// MCP; the transports are internal/mcpstdio and internal/httpserver.
package mcpserver

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/metrics"
)

// The instructions a client gives the model name only the tool sets this
// server has: a model told about Gmail on a server without the email tools
// goes looking for them.
var (
	//go:embed instructions_email.md
	emailInstructions string
	//go:embed instructions_agentmail.md
	agentMailInstructions string
)

// instructionsFor is the server's instructions for the enabled tool sets.
func instructionsFor(sets []string) string {
	email, agentMail := slices.Contains(sets, config.ToolsEmail), slices.Contains(sets, config.ToolsAgentMail)
	var b strings.Builder
	switch {
	case email && agentMail:
		b.WriteString("mailgate gives you the user's Gmail and a message board shared with other coding agents.\n")
	case email:
		b.WriteString("mailgate gives you the user's Gmail.\n")
	case agentMail:
		b.WriteString("mailgate gives you a message board shared with other coding agents.\n")
	default:
		return "" // channels and mailbox: their tool descriptions say everything
	}
	if email {
		b.WriteString("\n" + emailInstructions)
	}
	if agentMail {
		b.WriteString("\n" + agentMailInstructions)
	}
	return b.String()
}

// Deps is everything the server's tools need. A nil dependency disables the
// tool set that needs it.
type Deps struct {
	Version string
	Logger  *slog.Logger
	Tools   []string // enabled tool sets, as config.Config.Tools

	Email     *EmailDeps         // required when "email" is enabled
	AgentMail *agentmail.Service // required when "agentmail" is enabled
	// AgentMailProfile selects the agentmail tools listed: "full" (or "")
	// or "minimal" (AgentMailMinimalTools), as TOOLS_FILTER_PROFILE.
	AgentMailProfile string
	SetOptions       SetOptions // options of the channels and mailbox sets
	// SetStores are the storage ports of the channels and mailbox sets on
	// AgentMail's database (amstore.Store is one): required with those sets.
	SetStores SetStores

	// Pending, when set, stands for Email and AgentMail while the process
	// still opens them: New builds the server from the fields above alone,
	// so that initialize and the lists are answered without waiting for the
	// store, and the first call that needs a dependency (tools/call,
	// resources/read) waits for Pending, which returns the Deps with Email
	// and AgentMail set, or the error that stopped their opening (the call
	// answers with it). Pending returns ctx's error when ctx ends first.
	Pending func(ctx context.Context) (Deps, error)

	// Observer, when set, is told of every answered tool call (metrics).
	Observer CallObserver
}

// New builds the server with every enabled tool set registered: the
// inventory's tools of each set (inventory.go), each bound to its set's
// receiver.
func New(d Deps) (*mcp.Server, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	opts := &mcp.ServerOptions{
		Instructions: instructionsFor(d.Tools),
		Logger:       sdkLogger(d.Logger),
	}
	// The agent-mail resources are read through one reader, which the
	// subscriptions (agentmail_wake.go) read through too; their handlers
	// are server options, so both exist before the server.
	var p *pendingDeps
	var reader *amReader
	var wake *resourceWake
	if slices.Contains(d.Tools, config.ToolsAgentMail) {
		if d.Pending != nil {
			p = &pendingDeps{wait: d.Pending, logger: d.Logger}
			reader = &amReader{svc: p.agentMail}
			wake = newResourceWake(reader, p.ready, d.Logger)
		} else {
			svc := d.AgentMail
			reader = &amReader{svc: func() *agentmail.Service { return svc }}
			wake = newResourceWake(reader, nil, d.Logger)
		}
		wake.options(opts)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mailgate", Title: "mailgate", Version: d.Version}, opts)
	if wake != nil {
		wake.server = s
	}
	// Added first, so innermost: every middleware after it sees its answers
	// wrapped (encode.go).
	s.AddReceivingMiddleware(encodeOnce)
	adv := newAdvertised()
	s.AddReceivingMiddleware(adv.listTools)
	// The first middleware is the outermost: recovery must wrap everything
	// the workers run (workers.go).
	s.AddReceivingMiddleware(onWorkers(newWorkerPool()), recoverPanics(d.Logger), logCalls(d.Logger, d.Observer))
	only, err := agentMailProfile(d.AgentMailProfile)
	if err != nil && slices.Contains(d.Tools, config.ToolsAgentMail) {
		return nil, err
	}
	if d.Pending != nil {
		if p == nil {
			p = &pendingDeps{wait: d.Pending, logger: d.Logger}
		}
		for _, set := range d.Tools {
			if !slices.Contains(toolSetNames, set) {
				return nil, fmt.Errorf("building server: tool set %q is not available yet", set)
			}
			if set == config.ToolsAgentMail {
				addAgentMailResources(s, reader, d.Logger)
			}
			registerSet(s, adv, set, p.receiver(set), d.Logger, onlyFor(set, only))
		}
		// Added last, so outermost: every call that reaches a dependency,
		// the resources' own fallback included, has waited for it.
		s.AddReceivingMiddleware(p.await)
		return s, nil
	}
	for _, set := range d.Tools {
		recv, err := receiver(set, d)
		if err != nil {
			return nil, err
		}
		if set == config.ToolsAgentMail {
			addAgentMailResources(s, reader, d.Logger)
		}
		registerSet(s, adv, set, func() any { return recv }, d.Logger, onlyFor(set, only))
	}
	return s, nil
}

// toolSetNames are the sets receiver knows.
var toolSetNames = []string{config.ToolsEmail, config.ToolsAgentMail, config.ToolsChannels, config.ToolsMailbox}

// onlyFor is the agent-mail profile's tools for the agentmail set, nil
// (every tool) for the others.
func onlyFor(set string, only map[string]bool) map[string]bool {
	if set == config.ToolsAgentMail {
		return only
	}
	return nil
}

// receiver is the value a set's handlers run on, built from its
// dependencies.
func receiver(set string, d Deps) (any, error) {
	switch set {
	case config.ToolsEmail:
		if d.Email == nil {
			return nil, errors.New("building server: the email tool set needs its dependencies")
		}
		return &emailHandlers{d: d.Email}, nil
	case config.ToolsAgentMail:
		if d.AgentMail == nil {
			return nil, errors.New("building server: the agentmail tool set needs its store")
		}
		return &amTools{svc: d.AgentMail}, nil
	case config.ToolsChannels:
		if d.AgentMail == nil || d.SetStores == nil {
			return nil, errors.New("building server: the channels tool set needs the agent-mail store")
		}
		return newCHTools(d), nil
	case config.ToolsMailbox:
		if d.AgentMail == nil || d.SetStores == nil {
			return nil, errors.New("building server: the mailbox tool set needs the agent-mail store")
		}
		return newMBTools(d.AgentMail, d.SetStores.Mailboxes(), d.SetOptions), nil
	}
	return nil, fmt.Errorf("building server: tool set %q is not available yet", set)
}

// recoverPanics turns a panic in any handler into an error answer instead of
// killing the process (go-sdk has no recovery of its own), so one bad call
// never takes down an agent's whole session.
func recoverPanics(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if p := recover(); p != nil {
					logger.Error("panic in handler", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					if method == "tools/call" {
						res, err = errorResult("internal error: the server recovered from a fault in this tool; the details are in its log"), nil
						return
					}
					res, err = nil, errors.New("internal error")
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// logCalls gives every tool call a request id (the HTTP request's, else a
// new one), carried by its context into every line logged with it, and
// writes one structured line per call to the log (stderr); obs, when set,
// counts it. Arguments are never logged: they carry mail bodies and
// addresses.
func logCalls(logger *slog.Logger, obs CallObserver) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			ctx = metrics.WithRequestID(ctx, requestID(req))
			start := time.Now()
			res, err := next(ctx, method, req)
			d := time.Since(start)
			name := ""
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				name = p.Name
			}
			isErr := err != nil
			if r := toolResult(res); r != nil && r.IsError {
				isErr = true
			}
			if obs != nil {
				obs.ToolCall(ctx, name, isErr, d)
			}
			logger.DebugContext(ctx, "tool call", "tool", name, "error", isErr, "duration", d)
			return res, err
		}
	}
}

func ptr[T any](v T) *T { return &v }
