package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
)

// Agent-mail resources (resource://…), read-only views of the same data the
// tools return, listed in the inventory (inventory.go). The project
// parameter is a slug or an absolute path, plain or URL-encoded.

// r's svc is called on each read (the service may open after the server is
// built: Deps.Pending).
func addAgentMailResources(s *mcp.Server, r *amReader, logger *slog.Logger) {
	var regexps []*uritemplate.Template
	for _, res := range resources {
		if res.Set != config.ToolsAgentMail {
			continue
		}
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: res.URITemplate, Name: res.Name, Title: res.Title,
			Description: res.Description, MIMEType: res.MIMEType}, r.read)
		if t, err := uritemplate.New(res.URITemplate); err == nil {
			regexps = append(regexps, t)
		}
	}
	// The SDK routes a read only when the URI matches a template exactly, which
	// refuses unencoded paths in ?project= or extra parameters that clients of
	// the reference send. Such reads of our resources come here instead.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			rr, ok := req.(*mcp.ReadResourceRequest)
			if method != "resources/read" || !ok || rr.Params == nil || !r.ours(rr.Params.URI) || amMatchesAny(regexps, rr.Params.URI) {
				return next(ctx, method, req)
			}
			defer func() { // outside the server's recovery middleware: recover here
				if p := recover(); p != nil {
					logger.Error("panic reading resource", "uri", rr.Params.URI, "panic", fmt.Sprint(p))
					res, err = nil, errors.New("internal error")
				}
			}()
			return r.read(ctx, rr)
		}
	})
}

func amMatchesAny(ts []*uritemplate.Template, uri string) bool {
	for _, t := range ts {
		if t.Regexp().MatchString(uri) {
			return true
		}
	}
	return false
}

type amReader struct {
	svc func() *agentmail.Service
}

func (r *amReader) ours(uri string) bool {
	for _, kind := range []string{"projects", "project/", "product/", "agents/", "inbox/", "thread/", "message/", "file_reservations/"} {
		if strings.HasPrefix(uri, "resource://"+kind) {
			return true
		}
	}
	return false
}

// read serves every agent-mail resource.
func (r *amReader) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, "resource://")
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	rawQuery := ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, rawQuery = rest[:i], rest[i+1:]
	}
	kind, id, _ := strings.Cut(rest, "/")
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, amInvalidParams("malformed query in %s: %v", uri, err)
	}
	project := q.Get("project")
	bodies := amBoolParam(q.Get("include_bodies"), false)
	var v any
	switch kind {
	case "projects":
		v, err = r.svc().ListProjects(ctx)
	case "project":
		v, err = r.svc().ProjectDetail(ctx, id)
	case "product":
		v, err = r.svc().ProductDetail(ctx, id)
	case "agents":
		v, err = r.svc().Agents(ctx, id)
	case "inbox":
		limit, _ := strconv.Atoi(q.Get("limit"))
		v, err = r.svc().InboxView(ctx, project, id, limit, bodies)
	case "thread":
		v, err = r.svc().Thread(ctx, project, id, bodies)
	case "message":
		msgID, att, isAtt := strings.Cut(id, "/attachments/")
		n, perr := strconv.ParseInt(msgID, 10, 64)
		if perr != nil {
			return nil, amNotFound(uri, "message ids are integers")
		}
		if isAtt {
			seq, perr := strconv.Atoi(att)
			if perr != nil {
				return nil, amNotFound(uri, "attachments are numbered from 1")
			}
			return r.attachments(ctx, uri, project, n, []int{seq}, nil)
		}
		detail, derr := r.svc().MessageDetail(ctx, project, n)
		if derr != nil || len(detail.Attachments) == 0 {
			v, err = detail, derr
			break
		}
		b, err := json.Marshal(detail)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", uri, err)
		}
		seqs := make([]int, len(detail.Attachments))
		for i := range seqs {
			seqs[i] = i + 1
		}
		return r.attachments(ctx, uri, project, n, seqs, &mcp.ResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)})
	case "file_reservations":
		v, err = r.svc().ListReservations(ctx, id, amBoolParam(q.Get("active_only"), true))
	default:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, r.fail(uri, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// attachments answers with a message's attachments seqs as binary
// contents (after first, the message itself, when given), each as it was
// sent, under its own URI.
func (r *amReader) attachments(ctx context.Context, uri, project string, id int64, seqs []int, first *mcp.ResourceContents) (*mcp.ReadResourceResult, error) {
	var out []*mcp.ResourceContents
	if first != nil {
		out = append(out, first)
	}
	for _, seq := range seqs {
		a, err := r.svc().MessageAttachment(ctx, project, id, seq)
		if err != nil {
			return nil, r.fail(uri, err)
		}
		out = append(out, &mcp.ResourceContents{URI: agentmail.AttachmentURI(a.Project, id, seq), MIMEType: a.MediaType, Blob: a.Data})
	}
	return &mcp.ReadResourceResult{Contents: out}, nil
}

func amBoolParam(s string, def bool) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	return def
}

// fail maps Service errors to resource errors: misses are "resource not
// found" (with the reason), bad parameters invalid params, and anything else
// an internal error whose details go to the log.
func (r *amReader) fail(uri string, err error) error {
	var e *agentmail.Error
	switch {
	case errors.Is(err, agentmail.ErrNotFound) && errors.As(err, &e):
		return amNotFound(uri, e.Message)
	case errors.As(err, &e):
		return amInvalidParams("%s", e.Message)
	}
	r.svc().Logger().Error("reading agent-mail resource", "uri", uri, "err", err)
	return errors.New("internal error reading " + uri)
}

func amNotFound(uri, why string) error {
	err := mcp.ResourceNotFoundError(uri)
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		je.Message = "Resource not found: " + why
	}
	return err
}

func amInvalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}
