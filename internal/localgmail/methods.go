package localgmail

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// How a request finds its handler. discovery.go is Gmail's own table of
// methods (id, HTTP verb, path, scopes), generated from the discovery
// document the Go client was built from; a concept file (drafts.go,
// settings.go, …) registers each method it implements by that id, in an
// init function, with its quota cost:
//
//	func init() { handle("settings.getVacation", 1, (*Server).getVacation) }
//
// So a new method is one line beside its handler: the route, the upload
// path and the scopes that permit it are Google's. A request for a method
// Gmail has but this server does not implement answers as an unknown
// route does, 404 "Method not found.".

// apiMethod is one method of the discovery document. op is its id without
// "gmail.users." ("messages.get", "settings.filters.create", "getProfile"):
// the name Calls, Fault.Op and the quota table use.
type apiMethod struct {
	op, verb string
	path     string   // under gmail/v1/users/{userId}/: "messages/{id}"
	upload   bool     // also served under /upload/gmail/v1/users/{userId}/
	scopes   []string // any one permits it; short ("gmail.readonly") or full ("https://mail.google.com/")
}

// handler returns the value to marshal (nil: 204 No Content) or an error.
type handler func(s *Server, c *call) (any, error)

// implemented is one registered method: its handler and quota cost.
type implemented struct {
	h     handler
	units int // quota units per request, gmail-api.md §3 (Gmail's published table)
}

var handlers = map[string]implemented{}

// handle registers the handler of Gmail's method op (its discovery id
// without "gmail.users."), costing units of quota per request. It is
// called from init functions: a name Gmail does not have, or one
// registered twice, is a mistake of this package's and panics when the
// package loads (any test of it, the sandbox at start).
func handle(op string, units int, h handler) {
	if methodOf(op) == nil {
		panic(fmt.Sprintf("localgmail: %q is not a method of the Gmail API (discovery.go)", op))
	}
	if _, dup := handlers[op]; dup {
		panic(fmt.Sprintf("localgmail: %q registered twice", op))
	}
	handlers[op] = implemented{h: h, units: units}
}

// methodOf is Gmail's method op, or nil.
func methodOf(op string) *apiMethod {
	if i := slices.IndexFunc(discovery, func(m apiMethod) bool { return m.op == op }); i >= 0 {
		return &discovery[i]
	}
	return nil
}

// route is a method ready for matching: its path in segments.
type route struct {
	*apiMethod
	segs   []string
	params int // how many segments are {parameters}
}

// routeTable is discovery ready for matching, built when the first
// request is routed rather than at every mailgate start (the sandbox is
// one command of many).
var routeTable = sync.OnceValue(func() []route {
	rs := make([]route, len(discovery))
	for i := range discovery {
		rs[i] = route{apiMethod: &discovery[i], segs: strings.Split(discovery[i].path, "/")}
		for _, s := range rs[i].segs {
			if isParam(s) {
				rs[i].params++
			}
		}
	}
	return rs
})

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// match resolves the request to a method this server implements. api
// reports a /gmail/ or /upload/ path; rt is nil for an unknown route and
// for a method Gmail has that is not implemented here.
func match(r *http.Request) (rt *route, user string, params map[string]string, api, upload bool) {
	var segs []string
	for _, p := range strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/") {
		u, err := url.PathUnescape(p)
		if err != nil {
			u = p
		}
		segs = append(segs, u)
	}
	if len(segs) > 0 && segs[0] == "upload" {
		upload, segs = true, segs[1:]
	}
	if len(segs) < 4 || segs[0] != "gmail" || segs[1] != "v1" || segs[2] != "users" {
		return nil, "", nil, len(segs) > 0 && segs[0] == "gmail" || upload, upload
	}
	user, rest := segs[3], segs[4:]
	// Where a literal segment and a {parameter} both fit, the literal
	// wins (messages/send is not a message id), as on Google's front end.
	routes := routeTable()
	for i := range routes {
		cand := &routes[i]
		if cand.verb != r.Method || (upload && !cand.upload) || len(cand.segs) != len(rest) {
			continue
		}
		if rt != nil && cand.params >= rt.params {
			continue
		}
		if fits(cand.segs, rest) {
			rt = cand
		}
	}
	if rt == nil {
		return nil, user, nil, true, upload
	}
	if _, ok := handlers[rt.op]; !ok {
		return nil, user, nil, true, upload
	}
	params = map[string]string{}
	for j, p := range rt.segs {
		if isParam(p) {
			params[strings.Trim(p, "{}")] = rest[j]
		}
	}
	return rt, user, params, true, upload
}

func fits(pat, segs []string) bool {
	for j, p := range pat {
		if !isParam(p) && p != segs[j] {
			return false
		}
	}
	return true
}

// Methods are the discovery ids of the Gmail methods this server
// implements ("gmail.users.messages.get", …), sorted: a client's tests
// check they make each one they use against it (internal/gmail).
func Methods() []string {
	ids := make([]string, 0, len(handlers))
	for op := range handlers {
		ids = append(ids, "gmail.users."+op)
	}
	slices.Sort(ids)
	return ids
}
