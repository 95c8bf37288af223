package localgmail

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Errors and fault injection. Every error the server produces goes through
// apiError so its body has Google's shape (gmail-api.md §4): the Go client
// builds *googleapi.Error from exactly these fields, and mailgate's retry
// policy classifies on errors[0].reason.

type apiError struct {
	status  int
	reason  string
	message string
	header  http.Header
	// location is set for auth errors, like Google's "Authorization" header hint.
	location, locationType string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.reason, e.message) }

func apiErr(status int, reason, message string) *apiError {
	return &apiError{status: status, reason: reason, message: message}
}

// grpcStatus is the v2 "status" string Google sends next to the HTTP code.
func grpcStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ALREADY_EXISTS"
	case 412:
		return "FAILED_PRECONDITION"
	case 413:
		return "OUT_OF_RANGE"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 501:
		return "UNIMPLEMENTED"
	case 502, 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "UNKNOWN"
}

type errorItem struct {
	Message      string `json:"message"`
	Domain       string `json:"domain"`
	Reason       string `json:"reason"`
	Location     string `json:"location,omitempty"`
	LocationType string `json:"locationType,omitempty"`
}

type errorBody struct {
	Error struct {
		Code    int         `json:"code"`
		Message string      `json:"message"`
		Errors  []errorItem `json:"errors"`
		Status  string      `json:"status"`
	} `json:"error"`
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	var b errorBody
	b.Error.Code = e.status
	b.Error.Message = e.message
	b.Error.Status = grpcStatus(e.status)
	domain := "global"
	if e.status == 403 && (e.reason == "rateLimitExceeded" || e.reason == "userRateLimitExceeded" || e.reason == "dailyLimitExceeded") {
		domain = "usageLimits" // Google files 403 quota errors under usageLimits
	}
	b.Error.Errors = []errorItem{{Message: e.message, Domain: domain, Reason: e.reason, Location: e.location, LocationType: e.locationType}}
	for k, vs := range e.header {
		w.Header()[k] = append([]string(nil), vs...)
	}
	writeJSON(w, e.status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = 500, []byte(`{"error":{"code":500,"message":"Internal error encoding response","errors":[{"message":"Internal error encoding response","domain":"global","reason":"backendError"}],"status":"INTERNAL"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(body)
}

const authErrorMessage = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."

func authError() *apiError {
	e := apiErr(401, "authError", authErrorMessage)
	e.location, e.locationType = "Authorization", "header"
	e.header = http.Header{"Www-Authenticate": {`Bearer realm="https://accounts.google.com/", error="invalid_token"`}}
	return e
}

// Fault is a forced answer for the next request(s) of an operation.
type Fault struct {
	Op      string      // operation name as in Calls; "" = any Gmail API op (never "token"/"authorize": name those explicitly)
	Status  int         // HTTP status to answer (429, 403, 500, 503, 400, 401, …)
	Reason  string      // errors[0].reason; defaults by status
	Message string      // error message; defaults by reason/status
	Header  http.Header // extra response headers, e.g. Retry-After
	HTML    bool        // answer a non-JSON HTML body (as Google's 5xx sometimes are)
	Drop    bool        // perform the operation, then close the connection without answering
	// Stall: perform the operation, then hold the answer until the client
	// goes away (a caller killed after Google acted, before it heard so).
	Stall bool
	// Hold: wait until Hold is closed (or the client goes away), then
	// perform the operation and answer normally: a test acts while Gmail
	// "works".
	Hold  <-chan struct{}
	Times int // matching requests it applies to; 0 means 1; -1 = until ClearFaults
}

// Inject queues f. Faults are FIFO: a request takes the first one matching
// its op.
func (s *Server) Inject(f Fault) {
	if f.Times == 0 {
		f.Times = 1
	}
	if f.Header != nil {
		f.Header = f.Header.Clone()
	}
	s.fmu.Lock()
	s.faults = append(s.faults, &f)
	s.fmu.Unlock()
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.fmu.Lock()
	s.faults = nil
	s.fmu.Unlock()
}

// PendingFaults is the number of queued faults not yet used up.
func (s *Server) PendingFaults() int {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	return len(s.faults)
}

func (s *Server) takeFault(op string) *Fault {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	for i, f := range s.faults {
		if f.Op != op && (f.Op != "" || op == "token" || op == "authorize") {
			continue
		}
		taken := *f
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &taken
	}
	return nil
}

// SetLatency adds d before handling every request (Gmail API and /token).
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// SetConcurrencyCap makes requests beyond n in flight fail with Gmail's
// per-user concurrency 429. n <= 0 removes the cap.
func (s *Server) SetConcurrencyCap(n int) { s.concCap.Store(int64(n)) }

func defaultReason(status int) string {
	switch status {
	case 400:
		return "badRequest"
	case 401:
		return "authError"
	case 403:
		return "userRateLimitExceeded"
	case 404:
		return "notFound"
	case 409:
		return "duplicate"
	case 429:
		return "rateLimitExceeded"
	}
	if status >= 500 {
		return "backendError"
	}
	return "failedPrecondition"
}

// defaultMessage words an injected error as Gmail does ("Resolve errors",
// developers.google.com/workspace/gmail/api/guides/handle-errors: 403
// userRateLimitExceeded "User Rate Limit Exceeded", 429 rateLimitExceeded
// (Too Many Requests), 403 insufficientPermissions when the token lacks a
// scope; gmail-api.md §4 for the texts seen in the field).
func defaultMessage(status int, reason string) string {
	switch reason {
	case "userRateLimitExceeded":
		return "User Rate Limit Exceeded"
	case "rateLimitExceeded":
		if status == 403 {
			return "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'gmail.googleapis.com' for consumer 'project_number:000000000000'."
		}
		return "Resource has been exhausted (e.g. check quota)."
	case "dailyLimitExceeded":
		return "Daily Limit Exceeded"
	case "insufficientPermissions":
		return "Request had insufficient authentication scopes."
	case "authError":
		return authErrorMessage
	case "notFound":
		return "Requested entity was not found."
	case "duplicate":
		return "Label name exists or conflicts"
	case "backendError":
		if status == 503 {
			return "The service is currently unavailable."
		}
		return "Backend Error"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "Error"
}

// answerFault writes the fault's response for a non-Drop fault.
func answerFault(w http.ResponseWriter, op string, f *Fault) int {
	for k, vs := range f.Header {
		w.Header()[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	status := f.Status
	if status == 0 {
		status = 500
	}
	if f.HTML {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <title>Error %d (%s)!!1</title>\n"+
			"  <p><b>%d.</b> <ins>That’s an error.</ins>\n  <p>%s  <ins>That’s all we know.</ins>\n",
			status, http.StatusText(status), status, cmp.Or(f.Message, "The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds."))
		return status
	}
	if op == "token" || op == "authorize" {
		code := cmp.Or(f.Reason, map[bool]string{true: "server_error", false: "invalid_request"}[status >= 500])
		if status == 401 && f.Reason == "" {
			code = "invalid_client"
		}
		writeJSON(w, status, map[string]string{"error": code, "error_description": cmp.Or(f.Message, http.StatusText(status))})
		return status
	}
	reason := cmp.Or(f.Reason, defaultReason(status))
	e := apiErr(status, reason, cmp.Or(f.Message, defaultMessage(status, reason)))
	if reason == "authError" {
		a := authError()
		e.location, e.locationType = a.location, a.locationType
		if w.Header().Get("Www-Authenticate") == "" {
			w.Header()["Www-Authenticate"] = a.header["Www-Authenticate"]
		}
	}
	writeAPIError(w, e)
	return status
}

// discardWriter receives the real answer of a Drop fault, which is never sent.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}

// dropConnection closes the client's connection without a response: the
// operation already happened, the client sees a transport error. This is the
// "ambiguous send" of gmail-api.md §8.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // HTTP/2 or a wrapped writer: net/http resets the stream
}
