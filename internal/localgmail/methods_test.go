package localgmail

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestEveryHandlerServesItsGmailPath: each registered method is reached at
// Gmail's path for it, under /upload/ too where the document has a media
// upload, and at no other verb.
func TestEveryHandlerServesItsGmailPath(t *testing.T) {
	t.Parallel()
	s := New(Options{Now: fixedClock})
	for op := range handlers {
		m := methodOf(op)
		var segs []string
		for _, p := range strings.Split(m.path, "/") {
			if isParam(p) {
				p = "x"
			}
			segs = append(segs, p)
		}
		path := "/gmail/v1/users/me/" + strings.Join(segs, "/")
		paths := []string{path}
		if m.upload {
			paths = append(paths, "/upload"+path)
		}
		for _, p := range paths {
			before := s.Calls(op)
			s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m.verb, p, strings.NewReader("{}")))
			if s.Calls(op) != before+1 {
				t.Errorf("%s %s did not reach %s", m.verb, p, op)
			}
		}
	}
}

// TestUnknownRoutesAnswerAsGmail: a path that is no Gmail method, a Gmail
// method this server does not implement, a verb or an upload path the
// method does not have: 404 as Gmail answers them, counted as no method.
func TestUnknownRoutesAnswerAsGmail(t *testing.T) {
	t.Parallel()
	s := New(Options{Now: fixedClock})
	if _, ok := handlers["history.list"]; ok {
		t.Fatal("history.list is implemented now: pick another unimplemented method for this test")
	}
	for _, c := range []struct{ verb, path, message string }{
		{"GET", "/gmail/v1/users/me/history", "Method not found."},      // Gmail's, not implemented here
		{"GET", "/gmail/v1/users/me/nonsense", "Method not found."},     // not Gmail's
		{"PATCH", "/gmail/v1/users/me/messages/x", "Method not found."}, // no such verb
		{"POST", "/upload/gmail/v1/users/me/labels", "Method not found."},
		{"GET", "/gmail/v1/users", "Method not found."},
		{"GET", "/elsewhere", "Requested entity was not found."},
	} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(c.verb, c.path, nil))
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), strconv.Quote(c.message)) {
			t.Errorf("%s %s: %d %s, want 404 %q", c.verb, c.path, w.Code, w.Body, c.message)
		}
	}
	if n := s.Calls(""); n != 6 {
		t.Errorf("Calls(\"\") = %d, want the 6 unknown requests", n)
	}
}
