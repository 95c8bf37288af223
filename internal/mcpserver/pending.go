package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// A server built with Deps.Pending answers initialize and the lists at
// once, while the process opens the store (SQLite with its migrations, or a
// PostgreSQL connection, then the agent-mail store): a client's first
// answer does not wait for them. The calls that need them wait here, in one
// place (await), and run on receivers built once, from the opened Deps.

// pendingDeps is the dependencies of a server built with Deps.Pending.
type pendingDeps struct {
	wait   func(context.Context) (Deps, error)
	logger *slog.Logger

	once  sync.Once
	deps  Deps
	recvs map[string]any
	err   error
}

// ready waits for the dependencies and builds the receivers the first
// time they are there. It returns why they are not: ctx's end, or the
// error that stopped their opening.
func (p *pendingDeps) ready(ctx context.Context) error {
	d, err := p.wait(ctx)
	if err != nil {
		return err
	}
	p.once.Do(func() {
		p.deps, p.recvs = d, map[string]any{}
		for _, set := range d.Tools {
			if p.recvs[set], p.err = receiver(set, d); p.err != nil {
				return
			}
		}
	})
	return p.err
}

// await is the middleware that makes tool calls and resource reads wait
// for the dependencies. A call whose dependencies failed to open is
// answered with the reason, the same text the process ends with.
func (p *pendingDeps) await(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" && method != "resources/read" {
			return next(ctx, method, req)
		}
		if err := p.ready(ctx); err != nil {
			if ctx.Err() == nil {
				p.logger.Debug("call refused: the server's dependencies did not open", "method", method, "err", err)
			}
			text := fmt.Sprintf("mailgate could not start: %v", err)
			if method == "tools/call" {
				return errorResult(text), nil
			}
			return nil, fmt.Errorf("%s", text)
		}
		return next(ctx, method, req)
	}
}

// receiver is the receiver of set; it is called only after await.
func (p *pendingDeps) receiver(set string) func() any {
	return func() any { return p.recvs[set] }
}

// agentMail is the agent-mail service; it is called only after await.
func (p *pendingDeps) agentMail() *agentmail.Service { return p.deps.AgentMail }
