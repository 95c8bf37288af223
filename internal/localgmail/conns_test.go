package localgmail

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestOpenConns: a client's kept-alive connection counts as open until it
// closes, both behind gmailschema.Serve and on a started server; a request
// that never completed counts too (the crash tests wait for none open).
func TestOpenConns(t *testing.T) {
	t.Parallel()
	started := New(Options{Now: fixedClock})
	startedBase, err := started.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { started.Close() })
	mounted := New(Options{Now: fixedClock})
	mountedBase, _ := gmailschema.Serve(t, mounted)
	mounted.SetBaseURL(mountedBase)

	for _, tc := range []struct {
		name string
		s    *Server
		base string
	}{{"started", started, startedBase}, {"behind gmailschema.Serve", mounted, mountedBase}} {
		t.Run(tc.name, func(t *testing.T) {
			waitConns := func(want int) {
				t.Helper()
				testutil.Eventually(t, 20*time.Second, func() error {
					if n := tc.s.OpenConns(); n != want {
						return fmt.Errorf("%d connections open, want %d", n, want)
					}
					return nil
				})
			}
			tr := &http.Transport{}
			svc, err := gmail.NewService(context.Background(), option.WithEndpoint(tc.base),
				option.WithHTTPClient(&http.Client{Transport: tr}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Users.GetProfile("me").Do(); err != nil {
				t.Fatal(err)
			}
			waitConns(1) // kept alive after the answer
			tr.CloseIdleConnections()
			waitConns(0)

			// Half a request: open until the client goes.
			c, err := net.Dial("tcp", tc.base[len("http://"):len(tc.base)-1])
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "GET /gmail/v1/users/me/profile HTTP/1.1\r\nHost: x\r\n")
			waitConns(1)
			c.Close()
			waitConns(0)
		})
	}
}
