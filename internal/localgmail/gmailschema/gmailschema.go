// Package gmailschema checks Gmail API traffic against Google's own
// description of the API: the discovery document the Go client was
// generated from, shipped in the google.golang.org/api module as
// gmail/v1/gmail-api.json.
//
// It exists so the local Gmail server (internal/localgmail) cannot drift
// into answers Gmail never gives: tests put a Recorder in front of the
// server, and every answer mailgate gets is held to the document's schema
// (no field Gmail does not have, the JSON types Gmail uses: int64 and
// uint64 as strings, int32 as numbers, bytes as base64url, enums from the
// list) plus the few shapes the reference pages state in words (a
// messages.list item has only id and threadId, a list always says
// resultSizeEstimate). It is test support: Load runs `go list`.
package gmailschema

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Schema is a discovery-document schema (the subset Gmail's uses).
type Schema struct {
	ID                   string             `json:"id"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Ref                  string             `json:"$ref"`
	Properties           map[string]*Schema `json:"properties"`
	Items                *Schema            `json:"items"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	Enum                 []string           `json:"enum"`
}

// Method is one REST method of the document.
type Method struct {
	ID         string `json:"id"` // e.g. "gmail.users.messages.get"
	HTTPMethod string `json:"httpMethod"`
	Path       string `json:"path"` // "gmail/v1/users/{userId}/messages/{id}"
	// Scopes are the OAuth scopes of which any one permits the method
	// ("https://mail.google.com/", "https://www.googleapis.com/auth/gmail.readonly", …).
	Scopes  []string `json:"scopes"`
	Request *struct {
		Ref string `json:"$ref"`
	} `json:"request"`
	Response *struct {
		Ref string `json:"$ref"`
	} `json:"response"`
	MediaUpload *struct {
		MaxSize   string `json:"maxSize"`
		Protocols struct {
			Simple struct {
				Path string `json:"path"`
			} `json:"simple"`
		} `json:"protocols"`
	} `json:"mediaUpload"`
}

type resource struct {
	Methods   map[string]*Method   `json:"methods"`
	Resources map[string]*resource `json:"resources"`
}

// Doc is the parsed discovery document.
type Doc struct {
	Revision string
	Schemas  map[string]*Schema
	Methods  []*Method
}

// Parse reads a discovery document.
func Parse(b []byte) (*Doc, error) {
	var raw struct {
		Revision  string               `json:"revision"`
		Schemas   map[string]*Schema   `json:"schemas"`
		Resources map[string]*resource `json:"resources"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("gmailschema: %w", err)
	}
	d := &Doc{Revision: raw.Revision, Schemas: raw.Schemas}
	var walk func(map[string]*resource)
	walk = func(rs map[string]*resource) {
		for _, r := range rs {
			for _, m := range r.Methods {
				d.Methods = append(d.Methods, m)
			}
			walk(r.Resources)
		}
	}
	walk(raw.Resources)
	sort.Slice(d.Methods, func(i, j int) bool { return d.Methods[i].ID < d.Methods[j].ID })
	if len(d.Methods) == 0 || len(d.Schemas) == 0 {
		return nil, errors.New("gmailschema: no methods or schemas in the document")
	}
	return d, nil
}

var (
	loadOnce sync.Once
	loaded   *Doc
	loadErr  error
)

// Load reads gmail/v1/gmail-api.json from the google.golang.org/api module
// the build uses (found with `go list -m`), once per process: a test that
// changes HOME (so go's caches) calls it first.
func Load() (*Doc, error) {
	loadOnce.Do(func() {
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			goBin = "go"
		}
		out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
		if err != nil {
			loadErr = fmt.Errorf("gmailschema: finding the google.golang.org/api module: %w", err)
			return
		}
		dir := strings.TrimSpace(string(out))
		if dir == "" {
			// The module is not in the module cache go sees (a test that
			// moved HOME before the first Load: load earlier, in TestMain).
			loadErr = errors.New("gmailschema: google.golang.org/api is not in the module cache (HOME or GOMODCACHE changed before Load?)")
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, "gmail", "v1", "gmail-api.json"))
		if err != nil {
			loadErr = fmt.Errorf("gmailschema: %w", err)
			return
		}
		loaded, loadErr = Parse(b)
	})
	return loaded, loadErr
}

// Find returns the method serving httpMethod on path (a URL path such as
// "/gmail/v1/users/me/messages/18c…" or "/upload/gmail/v1/users/me/drafts"),
// nil if Gmail has none.
func (d *Doc) Find(httpMethod, path string) *Method {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, m := range d.Methods {
		if m.HTTPMethod != httpMethod {
			continue
		}
		if matchPath(m.Path, segs) {
			return m
		}
		if m.MediaUpload != nil && matchPath(m.MediaUpload.Protocols.Simple.Path, segs) {
			return m
		}
	}
	return nil
}

func matchPath(pattern string, segs []string) bool {
	if pattern == "" {
		return false
	}
	pat := strings.Split(strings.Trim(pattern, "/"), "/")
	if len(pat) != len(segs) {
		return false
	}
	for i, p := range pat {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		// "{keyPairId}:disable" style segments
		if j := strings.Index(p, "}:"); strings.HasPrefix(p, "{") && j > 0 {
			if !strings.HasSuffix(segs[i], p[j+1:]) {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return true
}

// always lists the fields every answer of a schema carries (the reference
// pages and every answer seen; a list answer says resultSizeEstimate even
// when empty: {"resultSizeEstimate":0}). Answers only: a request need not.
var (
	always = map[string][]string{
		"ListMessagesResponse": {"resultSizeEstimate"},
		"ListDraftsResponse":   {"resultSizeEstimate"},
		"ListThreadsResponse":  {"resultSizeEstimate"},
		"Message":              {"id"},
		"Thread":               {"id"},
		"Draft":                {"id"},
		"Label":                {"id", "name"},
		"Profile":              {"emailAddress", "historyId"},
	}
)

// listShapes are the list answers whose items the reference pages say are
// partial (the descriptions of the list fields in gmail-api.json):
// schema → list field → the only fields an item has ("message" of a draft:
// the only fields of its message).
var listShapes = map[string]struct {
	field string
	only  []string
	inner map[string][]string
}{
	// "Note that each message resource contains only an id and a threadId."
	"ListMessagesResponse": {field: "messages", only: []string{"id", "threadId"}},
	// "the Message property in each Draft resource only contains an id and a threadId"
	"ListDraftsResponse": {field: "drafts", only: []string{"id", "message"}, inner: map[string][]string{"message": {"id", "threadId"}}},
	// "each label resource only contains an id, name, messageListVisibility, labelListVisibility, and type"
	"ListLabelsResponse": {field: "labels", only: []string{"id", "name", "messageListVisibility", "labelListVisibility", "type"}},
	// "each thread resource does not contain a list of messages"
	"ListThreadsResponse": {field: "threads", only: []string{"id", "snippet", "historyId"}},
}

// checkListShape applies listShapes to an answer of schema name.
func checkListShape(at, name string, v any) []string {
	rule, ok := listShapes[name]
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil
	}
	var out []string
	for i, it := range asArray(obj[rule.field]) {
		item, _ := it.(map[string]any)
		for k, sub := range item {
			if !slices.Contains(rule.only, k) {
				out = append(out, fmt.Sprintf("%s.%s[%d] has %q: Gmail's list items carry only %v", at, rule.field, i, k, rule.only))
				continue
			}
			if inner := rule.inner[k]; inner != nil {
				m, _ := sub.(map[string]any)
				for f := range m {
					if !slices.Contains(inner, f) {
						out = append(out, fmt.Sprintf("%s.%s[%d].%s has %q: Gmail's list items carry only %v", at, rule.field, i, k, f, inner))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// CheckResponse holds one answer to the document: the JSON of a 2xx answer
// to its method's response schema (an empty body where the method has
// none); the error shape for anything else. It returns every problem found.
func (d *Doc) CheckResponse(httpMethod, path string, status int, contentType string, body []byte) []string {
	m := d.Find(httpMethod, path)
	if m == nil {
		if status < 300 {
			return []string{fmt.Sprintf("%s %s answered %d: Gmail has no such method", httpMethod, path, status)}
		}
		return nil
	}
	if status >= 300 {
		return checkError(m.ID, status, contentType, body)
	}
	if m.Response == nil {
		if len(bytes.TrimSpace(body)) > 0 {
			return []string{fmt.Sprintf("%s: Gmail answers no body, got %.80q", m.ID, body)}
		}
		return nil
	}
	return d.checkBody(true, m.ID+": answer is not JSON", m.ID+" "+m.Response.Ref, m.Response.Ref, body)
}

// CheckRequest holds a JSON request body to its method's request schema.
func (d *Doc) CheckRequest(httpMethod, path string, body []byte) []string {
	m := d.Find(httpMethod, path)
	if m == nil || m.Request == nil || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return d.checkBody(false, m.ID+" request: not JSON", m.ID+" request "+m.Request.Ref, m.Request.Ref, body)
}

// checkBody holds a JSON body to the schema ref: an answer (Gmail's
// always-present fields required, lists in their shape) or a request.
// notJSON is the problem of a body that is not JSON; at starts every other.
func (d *Doc) checkBody(answer bool, notJSON, at, ref string, body []byte) []string {
	v, err := decodeJSON(body)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", notJSON, err)}
	}
	var problems []string
	d.check(&problems, answer, at, ref, &Schema{Ref: ref}, v)
	if answer {
		problems = append(problems, checkListShape(at, ref, v)...)
	}
	return problems
}

// decodeJSON decodes a body with its numbers as written (json.Number), so
// an integer is held to its format's range as sent, never as a rounded
// float64.
func decodeJSON(body []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// check validates v against s, appending to problems; at names the place
// ("gmail.users.messages.get Message.payload.parts[0].body.size"), name is
// the schema name for shape rules, which hold for answers only.
func (d *Doc) check(problems *[]string, answer bool, at, name string, s *Schema, v any) {
	fail := func(f string, args ...any) { *problems = append(*problems, at+": "+fmt.Sprintf(f, args...)) }
	if s.Ref != "" {
		rs := d.Schemas[s.Ref]
		if rs == nil {
			fail("the document has no schema %s", s.Ref)
			return
		}
		s, name = rs, s.Ref
	}
	if v == nil {
		fail("null (Gmail leaves a field out instead)")
		return
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			fail("want an object, got %T", v)
			return
		}
		for _, f := range always[name] {
			if !answer {
				break
			}
			if _, ok := obj[f]; !ok {
				fail("%s always carries %q", name, f)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ps := s.Properties[k]
			if ps == nil {
				ps = s.AdditionalProperties
			}
			if ps == nil {
				fail("field %q is not in Gmail's %s", k, name)
				continue
			}
			sub := name + "." + k
			d.check(problems, answer, at+"."+k, sub, ps, obj[k])
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			fail("want an array, got %T", v)
			return
		}
		for i, it := range arr {
			d.check(problems, answer, fmt.Sprintf("%s[%d]", at, i), name, s.Items, it)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("want a string (format %q), got %T %v", s.Format, v, v)
			return
		}
		switch s.Format {
		case "int64":
			if _, err := strconv.ParseInt(str, 10, 64); err != nil {
				fail("int64 string %q", str)
			}
		case "uint64":
			if _, err := strconv.ParseUint(str, 10, 64); err != nil {
				fail("uint64 string %q", str)
			}
		case "byte":
			if _, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(str, "=")); err != nil {
				fail("not base64url: %.40q", str)
			}
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			fail("%q is not one of Gmail's values %v", str, s.Enum)
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			fail("want a JSON number (format %q), got %T %v", s.Format, v, v)
			return
		}
		bits := 32
		if s.Format == "int64" || s.Format == "uint64" {
			bits = 64
		}
		if strings.HasPrefix(s.Format, "uint") {
			if _, err := strconv.ParseUint(n.String(), 10, bits); err != nil {
				fail("%s out of %s", n, s.Format)
			}
		} else if _, err := strconv.ParseInt(n.String(), 10, bits); err != nil {
			fail("%s out of %s", n, s.Format)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			fail("want a number, got %T", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("want a boolean, got %T", v)
		}
	case "any", "":
	default:
		fail("schema type %q not understood", s.Type)
	}
}

func asArray(v any) []any {
	a, _ := v.([]any)
	return a
}

// checkError holds a non-2xx answer to Google's error shape
// (developers.google.com/workspace/gmail/api/guides/handle-errors):
// {"error":{"code","message","errors":[{"message","domain","reason"}],"status"}},
// code equal to the HTTP status. A 5xx may be an HTML page, as Google's
// front ends sometimes answer.
func checkError(id string, status int, contentType string, body []byte) []string {
	if status >= 500 && strings.HasPrefix(contentType, "text/html") {
		return nil
	}
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Errors  []struct {
				Message, Domain, Reason string
			} `json:"errors"`
			Status string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		return []string{fmt.Sprintf("%s error %d: not Google's error JSON: %.80q", id, status, body)}
	}
	var out []string
	if e.Error.Code != status || e.Error.Message == "" || e.Error.Status == "" || len(e.Error.Errors) == 0 ||
		e.Error.Errors[0].Reason == "" || e.Error.Errors[0].Domain == "" {
		out = append(out, fmt.Sprintf("%s error %d: incomplete error body %s", id, status, body))
	}
	return out
}

// Recorder is an http.Handler in front of a Gmail server that checks every
// request and answer against the document. Safe for concurrent use.
type Recorder struct {
	doc  *Doc
	next http.Handler

	mu       sync.Mutex
	answered map[string]int // method id → 2xx answers
	problems []string
}

// Wrap puts a Recorder in front of next.
func (d *Doc) Wrap(next http.Handler) *Recorder {
	return &Recorder{doc: d, next: next, answered: map[string]int{}}
}

func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path := req.URL.Path
	gmailAPI := strings.HasPrefix(path, "/gmail/") || strings.HasPrefix(path, "/upload/gmail/")
	if !gmailAPI { // OAuth endpoints and the like: not the Gmail API
		r.next.ServeHTTP(w, req)
		return
	}
	var reqBody []byte
	if req.Body != nil && strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
		reqBody, _ = readAll(req)
	}
	cw := &captureWriter{ResponseWriter: w}
	r.next.ServeHTTP(cw, req)
	status := cw.status
	if status == 0 && req.Context().Err() != nil {
		return // the client left before any answer
	}
	if status == 0 {
		status = http.StatusOK
	}
	var problems []string
	if status < 300 {
		// A request the document calls malformed must not be accepted.
		problems = r.doc.CheckRequest(req.Method, path, reqBody)
	}
	if !cw.hijacked {
		problems = append(problems, r.doc.CheckResponse(req.Method, path, status, cw.Header().Get("Content-Type"), cw.body.Bytes())...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, problems...)
	if m := r.doc.Find(req.Method, path); m != nil && status < 300 && !cw.hijacked {
		r.answered[m.ID]++
	}
}

// Problems is every disagreement with the document seen so far.
func (r *Recorder) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.problems)
}

// Answered is how many successful answers each method id gave.
func (r *Recorder) Answered() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.answered))
	for k, v := range r.answered {
		out[k] = v
	}
	return out
}

func readAll(req *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(req.Body)
	req.Body.Close()
	req.Body = readCloser{bytes.NewReader(buf.Bytes())}
	return buf.Bytes(), err
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// captureWriter passes the answer through and keeps a copy.
type captureWriter struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

// Hijack lets the server drop a connection (localgmail's Drop fault); the
// answer that was never sent is not checked.
func (c *captureWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := c.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("gmailschema: the connection cannot be hijacked")
	}
	c.hijacked = true
	return hj.Hijack()
}
