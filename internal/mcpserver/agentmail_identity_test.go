package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

type amProfile struct {
	Name              string `json:"name"`
	RequestedName     string `json:"requested_name"`
	NameNotice        string `json:"name_notice"`
	RegistrationToken string `json:"registration_token"`
}

// identityWorld is one store and several MCP sessions on it, as several
// agents' processes would be; each session is its own server.
type identityWorld struct {
	t     *testing.T
	clock *chClock
	first *amHarness
	svc   *agentmail.Service
}

const idProject = "/data/projects/app"

func newIdentityWorld(t *testing.T, opts ...func(*agentmail.Options)) *identityWorld {
	t.Helper()
	clock := &chClock{}
	opts = append(opts, func(o *agentmail.Options) { o.Now = clock.Now })
	h := newAMHarnessAt(t, amtest.DSN(t), opts...)
	h.call("ensure_project", map[string]any{"human_key": idProject}, nil)
	return &identityWorld{t: t, clock: clock, first: h, svc: h.svc}
}

// session connects another agent's session to the same store.
func (w *identityWorld) session() *amHarness {
	w.t.Helper()
	return &amHarness{t: w.t, ctx: w.first.ctx, cs: connectAM(w.t, w.svc), svc: w.svc}
}

func register(h *amHarness, name, token string) amProfile {
	h.t.Helper()
	args := map[string]any{"project_key": idProject, "name": name, "program": "claude-code", "model": "opus-4.5"}
	if token != "" {
		args["registration_token"] = token
	}
	var p amProfile
	h.call("register_agent", args, &p)
	return p
}

// TestIdentityTakeover: register_agent with a name another live session
// holds does not resume that identity: coerce gives the newcomer another
// name and says why; the holder's own session, or its registration token,
// still resumes it (the reference's "register again to update"); an
// identity idle past the liveness window may be resumed by anyone.
func TestIdentityTakeover(t *testing.T) {
	t.Parallel()
	w := newIdentityWorld(t)
	alice, mallory := w.first, w.session()

	first := register(alice, "BlueLake", "")
	if first.Name != "BlueLake" || first.RegistrationToken == "" {
		t.Fatalf("first registration: %+v, want BlueLake with a registration_token", first)
	}
	taken := register(mallory, "BlueLake", "")
	if taken.Name == "BlueLake" || taken.RequestedName != "BlueLake" || !strings.Contains(taken.NameNotice, "held by another live session") {
		t.Fatalf("newcomer asking for a live name got %+v: want a new name and a notice saying why", taken)
	}
	if taken.RegistrationToken == "" || taken.RegistrationToken == first.RegistrationToken {
		t.Errorf("newcomer's token %q must be its own", taken.RegistrationToken)
	}
	again := register(alice, "BlueLake", "")
	if again.Name != "BlueLake" || again.NameNotice != "" || again.RegistrationToken != first.RegistrationToken {
		t.Fatalf("the holder registering again: %+v, want BlueLake resumed with the same token", again)
	}
	wrong := register(w.session(), "BlueLake", "amreg_not-the-token")
	if wrong.Name == "BlueLake" || !strings.Contains(wrong.NameNotice, "registration_token given is not its token") {
		t.Fatalf("a wrong token resumed the identity or said nothing: %+v", wrong)
	}
	restarted := w.session() // alice's agent in a new process
	resumed := register(restarted, "BlueLake", first.RegistrationToken)
	if resumed.Name != "BlueLake" || resumed.NameNotice != "" {
		t.Fatalf("the token did not resume the identity: %+v", resumed)
	}
	// Idle past the window: the holder is gone; registering resumes it.
	w.clock.Advance(31 * time.Minute)
	late := register(w.session(), "BlueLake", "")
	if late.Name != "BlueLake" {
		t.Fatalf("an identity idle for 31 minutes was not resumable: %+v", late)
	}
}

// TestIdentityTakeoverStrict: in strict mode a name held by another live
// session is refused, saying how the real holder resumes it.
func TestIdentityTakeoverStrict(t *testing.T) {
	t.Parallel()
	w := newIdentityWorld(t, func(o *agentmail.Options) { o.NameMode = agentmail.NameStrict })
	first := register(w.first, "BlueLake", "")
	got := w.session().callErr("register_agent", map[string]any{"project_key": idProject, "name": "BlueLake"})
	if !strings.Contains(got, "held by another live session") || !strings.Contains(got, "registration_token") {
		t.Fatalf("strict refusal %q does not say the name is held and how to resume", got)
	}
	if p := register(w.session(), "BlueLake", first.RegistrationToken); p.Name != "BlueLake" {
		t.Fatalf("strict: the token did not resume: %+v", p)
	}
}

// TestSenderImpersonation: with BindSenders a session may send only as the
// agents it holds (or whose token it gives as sender_token); by default
// sender_name is trusted, as in the reference.
func TestSenderImpersonation(t *testing.T) {
	t.Parallel()
	for _, bind := range []bool{false, true} {
		w := newIdentityWorld(t, func(o *agentmail.Options) { o.BindSenders = bind })
		alice, mallory := w.first, w.session()
		tok := register(alice, "BlueLake", "").RegistrationToken
		register(mallory, "GreenCastle", "")
		send := map[string]any{"project_key": idProject, "sender_name": "BlueLake", "to": []string{"GreenCastle"}, "subject": "s", "body_md": "b"}
		_, errText, isErr, err := mallory.callRaw("send_message", send)
		if err != nil {
			t.Fatal(err)
		}
		if isErr != bind {
			t.Fatalf("bind=%v: sending as another session's agent: isError=%v %q", bind, isErr, errText)
		}
		if bind && !strings.Contains(errText, "may not send as 'BlueLake'") {
			t.Fatalf("refusal %q does not say why", errText)
		}
		if bind {
			withToken := map[string]any{"sender_token": tok}
			for k, v := range send {
				withToken[k] = v
			}
			mallory.call("send_message", withToken, nil) // the token proves it
			alice.call("send_message", send, nil)        // the holder itself
			mallory.callErr("reply_message", map[string]any{"project_key": idProject, "message_id": 1, "sender_name": "BlueLake", "body_md": "x"})
		}
	}
}

// TestChannelsIdentityTakeover: a channels client registering the name of
// an identity a live agentmail session holds acts as a core agent of its
// own ("<name>-<uuid>"), not as that identity.
func TestChannelsIdentityTakeover(t *testing.T) {
	t.Parallel()
	path := amtest.DSN(t)
	svc := compatService(t, path, nil)
	am := connectAM(t, svc)
	h := &amHarness{t: t, ctx: t.Context(), cs: am, svc: svc}
	dir := t.TempDir()
	var ep struct {
		Slug string `json:"slug"`
	}
	h.call("ensure_project", map[string]any{"human_key": dir}, &ep)
	var p amProfile
	h.call("register_agent", map[string]any{"project_key": dir, "name": "coder-1"}, &p)
	ch := connectCompat(t, svc, []string{"channels"}, SetOptions{ProjectKey: dir})
	id := chRegister(t, ch, "coder-1", "coder")
	ch.call("send_message", map[string]any{"agent_id": id, "subject": "s", "body": "b"}, nil)
	var who struct {
		Agents []struct {
			Name string `json:"name"`
		} `json:"agents"`
	}
	h.read("resource://agents/"+ep.Slug, &who)
	var names []string
	for _, a := range who.Agents {
		names = append(names, a.Name)
	}
	if len(names) != 2 || names[0] != "coder-1" || !strings.HasPrefix(names[1], "coder-1-") {
		t.Fatalf("agents %v: the channels client must get a core agent of its own", names)
	}
}

// TestIdentityResumedAfterClientRestart: an agent whose client restarted
// (its old session ended) registers its name again without a token and gets
// it back at once; only a live holder keeps a name from a newcomer.
func TestIdentityResumedAfterClientRestart(t *testing.T) {
	t.Parallel()
	w := newIdentityWorld(t)
	old := w.session()
	before := liveKeySet()
	if p := register(old, "BlueLake", ""); p.Name != "BlueLake" {
		t.Fatalf("first registration: %+v", p)
	}
	oldKeys := newKeys(before)
	old.cs.Close()
	waitKeysGone(t, oldKeys)
	if p := register(w.session(), "BlueLake", ""); p.Name != "BlueLake" || p.NameNotice != "" {
		t.Fatalf("a restarted agent did not get its name back: %+v", p)
	}
}

// liveKeySet is the keys of this process's open sessions that have made a
// call; newKeys is those that appeared since before (the tests here run one
// at a time, so those are the sessions the test itself used).
func liveKeySet() map[string]bool {
	m := map[string]bool{}
	liveKeys.Range(func(k, _ any) bool { m[k.(string)] = true; return true })
	return m
}

func newKeys(before map[string]bool) []string {
	var ks []string
	for k := range liveKeySet() {
		if !before[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

// waitKeysGone waits until the server side has seen the sessions end (it
// does so asynchronously after their clients close).
func waitKeysGone(t *testing.T, keys []string) {
	t.Helper()
	if len(keys) == 0 {
		t.Fatal("no session key to wait for")
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, k := range keys {
			if _, ok := liveKeys.Load(k); ok {
				return errors.New("the server never saw the closed session end")
			}
		}
		return nil
	})
}

// TestSessionLiveAcrossProcesses: a key from a process that no longer runs
// on this host is known to be gone; one from another host, or from a
// process that still runs, is not known (the identity's activity decides).
func TestSessionLiveAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		key         string
		live, known bool
	}{
		{"ended process on this host", "999999999@" + hostname + ":NONCE/x", false, true},
		{"earlier process with our pid", fmt.Sprintf("%d@%s:OTHERNONCE/x", os.Getpid(), hostname), false, true},
		{"running process on this host", fmt.Sprintf("%d@%s:NONCE/x", os.Getppid(), hostname), false, false},
		{"another host", "1@elsewhere.invalid:NONCE/x", false, false},
		{"older key form", "ABCDEF/x", false, false},
		{"closed session of this process", processPrefix + "/never-opened", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live, known := sessionLive(tt.key)
			if live != tt.live || known != tt.known {
				t.Fatalf("sessionLive(%q) = %v, %v; want %v, %v", tt.key, live, known, tt.live, tt.known)
			}
		})
	}
}
