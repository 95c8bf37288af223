package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

const project = "/data/projects/app"
const slug = "data-projects-app"

// env is one store with the agent-mail service on it and a local Gmail.
type env struct {
	path string
	db   *store.DB
	svc  *agentmail.Service
	gm   *localgmail.Server
	mb   *gmail.Client
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{path: amtest.DSN(t)} // agent-mail's schema, copied
	e.db, e.svc = openStore(t, e.path)
	e.gm = localgmail.New(localgmail.Options{})
	// Every answer the mirror gets is held to Gmail's discovery document.
	base, _ := gmailschema.Serve(t, e.gm)
	e.gm.SetBaseURL(base)
	e.mb = newMailbox(t, base)
	ctx := context.Background()
	if _, err := e.svc.EnsureProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"BlueLake", "GreenCastle", "RedStone"} {
		if _, err := e.svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: project, Name: a}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// openStore opens the store at path as one more mailgate process would:
// its own connection pool and agent-mail service.
func openStore(t testing.TB, path string) (*store.DB, *agentmail.Service) {
	t.Helper()
	db := storetest.OpenDSN(t, path)
	return db, amtest.AgentMail(t, db, agentmail.Options{})
}

// newMailbox is the real Gmail adapter on the local Gmail server, with
// short retry sleeps.
func newMailbox(t testing.TB, base string) *gmail.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := gmail.New(context.Background(), gmail.Options{Endpoint: base,
		TokenSource:  oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}),
		HTTPClient:   &http.Client{Transport: tr, Timeout: 10 * time.Second},
		RetryInitial: time.Millisecond, RetryMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fast are worker options for tests: quick polls and short backoffs.
var fast = outbox.WorkerOptions{Poll: 40 * time.Millisecond, BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond}

func (e *env) send(t *testing.T, from, subject, thread string, to ...string) int64 {
	t.Helper()
	r, err := e.svc.Send(context.Background(), agentmail.SendParams{ProjectKey: project, Sender: from, To: to,
		Subject: subject, BodyMD: "Body of " + subject + "\n\n- item é", ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	return r.Deliveries[0].Payload.ID
}

func (e *env) reply(t *testing.T, from string, id int64) int64 {
	t.Helper()
	r, err := e.svc.Reply(context.Background(), agentmail.ReplyParams{ProjectKey: project, MessageID: id, Sender: from, BodyMD: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// startGmail runs a Gmail mirror worker on db and svc (one process's
// store: see openStore) until the test ends.
func (e *env) startGmail(t *testing.T, db *store.DB, svc *agentmail.Service, lease time.Duration) {
	t.Helper()
	stop, err := mirror.StartGmail(context.Background(), db, svc, e.mb, lease, fast)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
}

// testClock is the wall clock plus what the test skipped.
type testClock struct{ skipped atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.skipped.Load())) }

// startGmailClock is startGmail on one process's store with the outbox on
// a testClock, so that a test can skip the lease an unsure row waits out.
func (e *env) startGmailClock(t *testing.T, lease time.Duration) *testClock {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ob, err := outbox.Open(ctx, e.db, mirror.GmailSinkName, lease)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{}
	ob.SetClock(clock.Now)
	w := outbox.NewWorker(ob, &mirror.GmailSink{DB: e.db, Messages: e.svc, Mailbox: e.mb}, fast)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return clock
}

// skipIdleLease moves clock a lease on when no Gmail outbox row is claimed
// and none is due within half a lease: every row is then waiting out a
// delay, and skipping it only brings the wait's end. Nothing claimed means
// no claim's lease can lapse under a worker still working, the one thing a
// lease guards; and a claim reading the clock just before the skip finds
// nothing due, so every later claim leases on the skipped clock. A row
// that is due soon is left to the worker. It is not for a test where a
// Gmail insert may still land after its client gave up (a killed process,
// TestCrash, skips its child's lease only once the local Gmail has no
// request in flight): the lease is that insert's time to land. The local Gmail
// finishes an operation before its client sees the fault (a Drop does the
// work, then closes the connection), so in TestOutage nothing lands late.
func skipIdleLease(db *store.DB, clock *testClock, lease time.Duration) error {
	var claimed, soon int
	err := db.QueryRow(db.Rebind(`SELECT count(lease_owner), count(CASE WHEN next_us <= ? THEN 1 END)
		FROM am_mirror_outbox WHERE sink = ?`), clock.Now().Add(lease/2).UnixMicro(), mirror.GmailSinkName).Scan(&claimed, &soon)
	if err != nil || claimed > 0 || soon > 0 {
		return err
	}
	clock.skipped.Add(int64(lease))
	return nil
}

// drained says whether the sink's outbox is empty, with the last error of
// a row when it is not.
func drained(db *store.DB, sink string) error {
	var n int
	if err := db.QueryRow(db.Rebind(`SELECT count(*) FROM am_mirror_outbox WHERE sink = ?`), sink).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	var last string
	db.QueryRow(db.Rebind(`SELECT coalesce(last_error, '') FROM am_mirror_outbox WHERE sink = ? LIMIT 1`), sink).Scan(&last)
	return fmt.Errorf("%d %s outbox rows still pending (last error %q)", n, sink, last)
}

// drainWait bounds a wait for a worker to empty its outbox: a bound on a
// hung test, not a speed the test asks for (a drain of a few rows takes
// milliseconds, but 20 s on a CI machine running the race suites beside
// other work failed two tests with no error at all).
const drainWait = 2 * time.Minute

// waitDrained waits until the sink's outbox is empty.
func waitDrained(t *testing.T, db *store.DB, sink string, within time.Duration) {
	t.Helper()
	testutil.Eventually(t, within, func() error { return drained(db, sink) })
}

// search lists the ids of Gmail messages matching q, over the REST API.
func search(t *testing.T, base, q string) []string {
	t.Helper()
	u := base + "gmail/v1/users/me/messages?" + url.Values{"q": {q}, "maxResults": {"500"}, "includeSpamTrash": {"true"}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("search %q: %s", q, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		ids[i] = m.ID
	}
	return ids
}

// assertExactlyOnce checks that every message in ids is in Gmail exactly
// once, under the project label, and that nothing else is.
func assertExactlyOnce(t *testing.T, e *env, ids []int64) {
	t.Helper()
	base := e.gm.URL()
	for _, id := range ids {
		mid := msgID(t, e, id)
		if got := search(t, base, "rfc822msgid:"+mid); len(got) != 1 {
			t.Errorf("message %d (%s) is in Gmail %d times, want 1", id, mid, len(got))
		}
	}
	if got := search(t, base, fmt.Sprintf("label:%s", mirror.LabelPrefix+slug)); len(got) != len(ids) {
		t.Errorf("label holds %d messages, want %d", len(got), len(ids))
	}
	var recorded int
	if err := e.db.QueryRow(`SELECT count(*) FROM am_mirror_gmail_messages`).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if recorded != len(ids) {
		t.Errorf("%d messages recorded as mirrored, want %d", recorded, len(ids))
	}
}

// msgID is the Message-ID the mirror gives agent message id.
func msgID(t testing.TB, e *env, id int64) string {
	t.Helper()
	m, _, err := e.svc.MessageByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return mirror.MessageID(slug, id, m.CreatedAt)
}

func jsonDecode(resp *http.Response, v any) error {
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s", resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
