package localgmail

import (
	"net/http"
	"strings"
	"testing"
)

// TestSettingsScopes: as Google's discovery document lists, creating a
// filter and setting the vacation responder need gmail.settings.basic, and
// neither gmail.modify nor the full scope stands in; reading them does with
// gmail.readonly.
func TestSettingsScopes(t *testing.T) {
	s := New(Options{RequireAuth: true})
	s.AddForwardingAddress("x@c.example", true) // a filter forwards only to a verified address (forwarding.go)
	base := startServer(t, s)
	call := func(method, path, body string, scopes ...string) int {
		t.Helper()
		req, err := http.NewRequest(method, base+"gmail/v1/users/me/"+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.IssueAccessToken("c", scopes...))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	filter := `{"criteria":{"from":"a@b.example"},"action":{"forward":"x@c.example"}}`
	vacation := `{"enableAutoReply":true,"responseBodyPlainText":"away"}`
	for _, c := range []struct {
		method, path, body string
		scope              string
		want               int
	}{
		{"POST", "settings/filters", filter, "gmail.modify", 403},
		{"POST", "settings/filters", filter, "https://mail.google.com/", 403},
		{"PUT", "settings/vacation", vacation, "gmail.modify", 403},
		{"GET", "settings/filters", "", "gmail.readonly", 200},
		{"GET", "settings/vacation", "", "gmail.readonly", 200},
		{"POST", "settings/filters", filter, "gmail.settings.basic", 200},
		{"PUT", "settings/vacation", vacation, "gmail.settings.basic", 200},
		{"GET", "settings/forwardingAddresses", "", "gmail.readonly", 200},
		{"GET", "settings/forwardingAddresses/x@c.example", "", "gmail.settings.basic", 200},
		{"POST", "settings/forwardingAddresses", `{"forwardingEmail":"y@c.example"}`, "gmail.settings.basic", 403},
		{"POST", "settings/forwardingAddresses", `{"forwardingEmail":"y@c.example"}`, "https://mail.google.com/", 403},
		{"POST", "settings/forwardingAddresses", `{"forwardingEmail":"y@c.example"}`, "gmail.settings.sharing", 200},
	} {
		if got := call(c.method, c.path, c.body, c.scope); got != c.want {
			t.Errorf("%s %s with %s: %d, want %d", c.method, c.path, c.scope, got, c.want)
		}
	}
	if fs := s.Filters(); len(fs) != 1 || fs[0].Action.Forward != "x@c.example" {
		t.Fatalf("filters: %+v", fs)
	}
	if !s.Vacation().EnableAutoReply {
		t.Fatal("vacation not set")
	}
}
