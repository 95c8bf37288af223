package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Role is what a JWT may do. Roles are ordered: each allows what the ones
// below it allow.
type Role int

const (
	RoleNone Role = iota
	// RoleRead calls the read-only tools of the agent-mail sets (fetch,
	// search, list, whois) and reads their resources.
	RoleRead
	// RoleAgent calls every tool of the agent-mail sets (agentmail,
	// channels, mailbox): the coordination tools.
	RoleAgent
	// RoleAdmin calls everything, the email tools included, and scrapes
	// /metrics. The static bearer token is an admin.
	RoleAdmin
)

var roleNames = [...]string{RoleNone: "none", RoleRead: "read", RoleAgent: "agent", RoleAdmin: "admin"}

func (r Role) String() string {
	if r < 0 || int(r) >= len(roleNames) {
		return "unknown"
	}
	return roleNames[r]
}

// ParseRole reads a role claim's value: read, agent or admin, or the
// reference agent-mail server's reader and writer (read and agent).
func ParseRole(s string) (Role, bool) {
	for r, name := range roleNames {
		if r > 0 && strings.EqualFold(s, name) {
			return Role(r), true
		}
	}
	switch strings.ToLower(s) {
	case "reader":
		return RoleRead, true
	case "writer":
		return RoleAgent, true
	}
	return RoleNone, false
}

// Principal is who a request speaks for.
type Principal struct {
	Role Role
	// Projects, when not nil, are the only projects the principal may
	// touch (keys as the token gives them: absolute paths or slugs).
	Projects []string
	Subject  string // the JWT's sub, for the log
	// Static: the static bearer token, or no authentication at all
	// (AGENT_MAIL_HTTP_AUTH=none): nothing further is checked.
	Static bool
}

// everyone is the principal of the static token and of the tokenless mode.
var everyone = &Principal{Role: RoleAdmin, Static: true}

// ToolRule is what a tool asks of a JWT.
type ToolRule struct {
	Role Role // the least role that may call it
	// ProjectArgs are the arguments naming a project (project_key,
	// human_key, to_project): each present must be one of the token's.
	ProjectArgs []string
	// AddressArgs are lists of agent names where Name@project addresses
	// an agent of another project, which must be one of the token's too.
	AddressArgs []string
	// PathArgs are absolute folder paths the tool works in, which must lie
	// in one of the token's projects' folders.
	PathArgs []string
	// Project is the project every call of the tool touches whatever its
	// arguments (the channels and mailbox sets serve one project).
	Project string
	// Products: the tool reaches every project linked to a product
	// (fetch_inbox_product, products_link, …), which a project claim
	// cannot bound: refused to a token limited to projects.
	Products bool
}

// ProjectKeyFunc gives a project key's canonical form (the project's
// absolute path), resolving a slug through the store, as the tools do. It
// fails for a key that names no project.
type ProjectKeyFunc func(ctx context.Context, key string) (string, error)

// authorize checks an MCP request's body against a JWT principal's role
// and projects. It returns "" when every message in it is allowed, else
// the refusal's text (answered 403) and the refused message's id.
//
// The body is read as go-sdk reads it: its JSON-RPC keys ("method",
// "params", "name", "arguments", "uri") matched exactly (go-sdk's decoder
// ignores "Method"); a message repeating one of them is refused, so no
// decoder can take another value than the one checked. The tools' own
// arguments are decoded by encoding/json, without regard to case: every
// key matching a project argument that way is checked.
func (h *Handler) authorize(ctx context.Context, p *Principal, body []byte) (string, json.RawMessage) {
	body = bytes.TrimSpace(body)
	// What cannot be read here is refused rather than passed on: another
	// decoder might make something of it.
	const unreadable = "forbidden: the request body is not a JSON-RPC message this server can check"
	msgs := []json.RawMessage{body}
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &msgs); err != nil {
			return unreadable, nil
		}
	}
	for _, raw := range msgs {
		m, ok := objectFields(raw)
		if !ok {
			return unreadable, nil
		}
		id, _ := m.one("id")
		if why := h.authorizeOne(ctx, p, m); why != "" {
			return why, id
		}
	}
	return "", nil
}

func (h *Handler) authorizeOne(ctx context.Context, p *Principal, m fields) string {
	rawMethod, ok := m.one("method")
	if !ok {
		return dupRefusal("method")
	}
	var method string
	json.Unmarshal(rawMethod, &method) // absent or not a string: not a call
	rawParams, ok := m.one("params")
	if !ok {
		return dupRefusal("params")
	}
	params, _ := objectFields(rawParams)
	switch method {
	case "tools/call":
		rawName, ok := params.one("name")
		if !ok {
			return dupRefusal("name")
		}
		var name string
		json.Unmarshal(rawName, &name)
		rawArgs, ok := params.one("arguments")
		if !ok {
			return dupRefusal("arguments")
		}
		args, _ := objectFields(rawArgs)
		return h.authorizeTool(ctx, p, name, args)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		rawURI, ok := params.one("uri")
		if !ok {
			return dupRefusal("uri")
		}
		var uri string
		json.Unmarshal(rawURI, &uri)
		if p.Role < RoleRead {
			return fmt.Sprintf("forbidden: reading resources needs the read role; this token has %s", p.Role)
		}
		if p.Projects == nil {
			return ""
		}
		project := resourceProject(uri)
		if project == "" {
			return fmt.Sprintf("forbidden: this token is limited to the projects %s, and the resource %s names no project", strings.Join(p.Projects, ", "), uri)
		}
		return h.checkProject(ctx, p, uri, project)
	}
	return ""
}

func dupRefusal(key string) string {
	return fmt.Sprintf("forbidden: the request gives %q more than once", key)
}

func (h *Handler) authorizeTool(ctx context.Context, p *Principal, name string, args fields) string {
	rule, ok := h.opts.Tools[name]
	if !ok {
		rule = ToolRule{Role: RoleAdmin} // not in the inventory: only an admin may try it
	}
	if p.Role < rule.Role {
		return fmt.Sprintf("forbidden: %s needs the %s role; this token has %s (%s)", name, rule.Role, p.Role, roleMeaning(rule.Role))
	}
	if p.Projects == nil {
		return ""
	}
	if rule.Products {
		return fmt.Sprintf("forbidden: %s reaches every project linked to a product, and this token is limited to the projects %s", name, strings.Join(p.Projects, ", "))
	}
	if rule.Project != "" {
		if why := h.checkProject(ctx, p, name, rule.Project); why != "" {
			return why
		}
	}
	matches := func(list []string, key string) bool {
		return slices.ContainsFunc(list, func(a string) bool { return strings.EqualFold(a, key) })
	}
	for _, f := range args {
		switch {
		case matches(rule.ProjectArgs, f.key):
			var key string
			if json.Unmarshal(f.val, &key) != nil || strings.TrimSpace(key) == "" {
				continue // absent, or not a string: the tool refuses a bad one
			}
			if why := h.checkProject(ctx, p, name, key); why != "" {
				return why
			}
		case matches(rule.PathArgs, f.key):
			var dir string
			if json.Unmarshal(f.val, &dir) != nil || strings.TrimSpace(dir) == "" {
				continue
			}
			if why := h.checkInProject(ctx, p, name, dir); why != "" {
				return why
			}
		case matches(rule.AddressArgs, f.key):
			for _, addr := range addresses(f.val) {
				if _, project, ok := strings.Cut(addr, "@"); ok && strings.TrimSpace(project) != "" {
					if why := h.checkProject(ctx, p, name, strings.TrimSpace(project)); why != "" {
						return why
					}
				}
			}
		}
	}
	return ""
}

// fields are a JSON object's members in order, duplicates kept.
type fields []field

type field struct {
	key string
	val json.RawMessage
}

// one is the value of the member named exactly key (nil when absent); ok
// is false when the object has more than one.
func (fs fields) one(key string) (json.RawMessage, bool) {
	var v json.RawMessage
	n := 0
	for _, f := range fs {
		if f.key == key {
			v, n = f.val, n+1
		}
	}
	return v, n <= 1
}

// objectFields reads raw as a JSON object's members; ok is false when it is
// not an object.
func objectFields(raw []byte) (fields, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var fs fields
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		fs = append(fs, field{key, val})
	}
	return fs, true
}

func roleMeaning(r Role) string {
	switch r {
	case RoleRead:
		return "read: the read-only agent-mail tools"
	case RoleAgent:
		return "agent: every agent-mail, channels and mailbox tool"
	}
	return "admin: every tool, email included"
}

// checkProject refuses key unless it is one of p's projects, comparing
// canonical forms (a slug is resolved to its project's path).
func (h *Handler) checkProject(ctx context.Context, p *Principal, what, key string) string {
	refuse := fmt.Sprintf("forbidden: %s touches project %s, and this token is limited to the projects %s", what, key, strings.Join(p.Projects, ", "))
	canon := h.canonicalProject(ctx, key)
	if canon == "" {
		return refuse
	}
	if slices.ContainsFunc(p.Projects, func(allowed string) bool { return h.canonicalProject(ctx, allowed) == canon }) {
		return ""
	}
	return refuse
}

// checkInProject refuses dir unless it is one of p's projects' folders or
// lies inside one.
func (h *Handler) checkInProject(ctx context.Context, p *Principal, what, dir string) string {
	d := path.Clean(strings.TrimSpace(dir))
	for _, allowed := range p.Projects {
		root := h.canonicalProject(ctx, allowed)
		if root != "" && (d == root || strings.HasPrefix(d, strings.TrimSuffix(root, "/")+"/")) {
			return ""
		}
	}
	return fmt.Sprintf("forbidden: %s works in %s, which is in none of this token's projects (%s)", what, dir, strings.Join(p.Projects, ", "))
}

func (h *Handler) canonicalProject(ctx context.Context, key string) string {
	if h.opts.ProjectKey == nil {
		return strings.TrimSpace(key)
	}
	canon, err := h.opts.ProjectKey(ctx, key)
	if err != nil {
		return ""
	}
	return canon
}

// addresses reads a recipients argument: a list of names, or one string
// of names separated by commas (the agentmail set accepts both).
func addresses(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return strings.Split(one, ",")
	}
	return nil
}

// resourceProject is the project an agent-mail resource URI names: the
// path of resource://project/{slug}, agents/{project} and
// file_reservations/{slug}, else its ?project= parameter.
func resourceProject(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	switch u.Host {
	case "project", "agents", "file_reservations":
		seg, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		if s, err := url.PathUnescape(seg); err == nil {
			return s
		}
		return seg
	}
	return u.Query().Get("project")
}
