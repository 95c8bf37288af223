package gmailschema

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Serve starts h behind a Recorder on loopback for the length of the test
// and returns the base URL (ending in "/") and the Recorder. When the test
// ends, every disagreement with the document fails it.
func Serve(t testing.TB, h http.Handler) (string, *Recorder) {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	rec := d.Wrap(h)
	ts := httptest.NewUnstartedServer(rec)
	if cs, ok := h.(interface {
		ConnState(net.Conn, http.ConnState)
	}); ok {
		ts.Config.ConnState = cs.ConnState // localgmail's OpenConns
	}
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		if p := rec.Problems(); len(p) > 0 {
			t.Errorf("answers Gmail would not give (gmail-api.json, revision %s):\n%s", d.Revision, strings.Join(p, "\n"))
		}
	})
	return ts.URL + "/", rec
}
