package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/archive"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestArchiveProfilesAndReservations (issue 30, item 6): through the real
// protocol, register_agent writes agents/<Name>/profile.json and
// file_reservation_paths, renew and release write file_reservations/<id>.json
// with the reservation's state and its events, in the vault's git
// repository; an agent registered before the archive first started gets
// its profile too, and a restart records nothing twice.
func TestArchiveProfilesAndReservations(t *testing.T) {
	t.Parallel()
	testutil.NeedGit(t)
	h, clock := newAMHarnessClocked(t)
	vault := t.TempDir()
	git := func(args ...string) string { return testutil.Git(t, vault, args...) }
	git("init", "-q")

	// BlueLake exists before the archive first starts on this store.
	h.setup("/p/app", "BlueLake")
	start := func() func() error {
		stop, err := archive.Start(h.ctx, h.db, h.svc, vault, outbox.WorkerOptions{Poll: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return stop
	}
	stop := start()

	var prof agentmail.AgentProfile
	h.call("register_agent", map[string]any{"project_key": "/p/app", "name": "GreenDog", "program": "codex", "model": "gpt-5",
		"task_description": "refactor </auth> & \"login\""}, &prof)
	if prof.RegistrationToken == "" {
		t.Fatal("register_agent answered no registration token: the secrecy check below would prove nothing")
	}
	projectDir := filepath.Join(vault, "AgentMail", "p-app")
	readJSON := func(rel string, v any) error {
		data, err := os.ReadFile(filepath.Join(projectDir, rel))
		if err != nil {
			return err
		}
		return json.Unmarshal(data, v)
	}
	waitFor := func(what string, check func() error) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, func() error {
			if err := check(); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return nil
		})
	}
	waitFor("profiles", func() error {
		var g, b archive.Profile
		if err := readJSON("agents/GreenDog/profile.json", &g); err != nil {
			return err
		}
		if err := readJSON("agents/BlueLake/profile.json", &b); err != nil {
			return err
		}
		want := archive.Profile{ID: prof.ID, Name: "GreenDog", Project: "p-app", Program: "codex", Model: "gpt-5",
			TaskDescription: "refactor </auth> & \"login\"", InceptionTS: g.InceptionTS, LastActiveTS: g.LastActiveTS,
			AttachmentsPolicy: g.AttachmentsPolicy, ContactPolicy: g.ContactPolicy}
		if g != want || g.InceptionTS != clock.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00") || g.ContactPolicy == "" {
			return fmt.Errorf("GreenDog's profile %+v, want %+v", g, want)
		}
		if b.Name != "BlueLake" || b.Program != "claude-code" || b.Model != "opus-4.5" {
			return fmt.Errorf("BlueLake's profile %+v", b)
		}
		return nil
	})

	var res agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"src/auth/**"},
		"exclusive": true, "reason": "auth refactor", "ttl_seconds": 3600}, &res)
	id := res.Granted[0].ID
	resFile := fmt.Sprintf("file_reservations/%d.json", id)
	events := func(f archive.ReservationFile) string {
		var ev []string
		for _, e := range f.History {
			ev = append(ev, e.Event)
		}
		return strings.Join(ev, ",")
	}
	waitFor("granted", func() error {
		var f archive.ReservationFile
		if err := readJSON(resFile, &f); err != nil {
			return err
		}
		if f.Agent != "GreenDog" || f.PathPattern != "src/auth/**" || !f.Exclusive || f.Reason != "auth refactor" ||
			f.ReleasedTS != nil || events(f) != "granted" || f.History[0].ExpiresTS != f.ExpiresTS {
			return fmt.Errorf("%+v", f)
		}
		return nil
	})

	clock.Advance(10 * time.Minute)
	var ren agentmail.RenewResult
	h.call("renew_file_reservations", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "file_reservation_ids": []any{id}, "extend_seconds": 600}, &ren)
	newExpiry := *ren.FileReservations[0].NewExpiresTS
	waitFor("renewed", func() error {
		var f archive.ReservationFile
		if err := readJSON(resFile, &f); err != nil {
			return err
		}
		if events(f) != "granted,renewed" || f.History[1].ExpiresTS != f.ExpiresTS || f.History[0].ExpiresTS == f.ExpiresTS {
			return fmt.Errorf("%+v (renewed to %s)", f, newExpiry)
		}
		return nil
	})

	clock.Advance(time.Minute)
	h.call("release_file_reservations", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "file_reservation_ids": []any{id}}, nil)
	// A profile change rewrites the profile.
	h.call("register_agent", map[string]any{"project_key": "/p/app", "name": "GreenDog", "program": "codex", "model": "gpt-5",
		"task_description": "review", "registration_token": prof.RegistrationToken}, nil)
	waitFor("released and updated", func() error {
		var f archive.ReservationFile
		if err := readJSON(resFile, &f); err != nil {
			return err
		}
		want := clock.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
		if events(f) != "granted,renewed,released" || f.ReleasedTS == nil || *f.ReleasedTS != want || f.History[2].TS != want {
			return fmt.Errorf("%+v", f)
		}
		var g archive.Profile
		if err := readJSON("agents/GreenDog/profile.json", &g); err != nil {
			return err
		}
		if g.TaskDescription != "review" || g.LastActiveTS != want {
			return fmt.Errorf("profile %+v", g)
		}
		return nil
	})
	stop()
	for _, rel := range []string{resFile, "agents/GreenDog/profile.json"} {
		data, _ := os.ReadFile(filepath.Join(projectDir, rel))
		t.Logf("%s:\n%s", rel, data)
	}

	// Committed on stopping, and no secret anywhere in the archive.
	committed := git("ls-files", "AgentMail")
	for _, f := range []string{"AgentMail/p-app/agents/GreenDog/profile.json", "AgentMail/p-app/agents/BlueLake/profile.json", "AgentMail/p-app/" + resFile} {
		if !strings.Contains(committed, f) {
			t.Errorf("%s not committed; committed:\n%s", f, committed)
		}
	}
	if st := git("status", "--porcelain", "--", "AgentMail"); st != "" {
		t.Errorf("left uncommitted:\n%s", st)
	}
	if grep := exec.Command("grep", "-rF", prof.RegistrationToken, filepath.Join(vault, "AgentMail")); grep.Run() == nil {
		t.Error("the registration token is in the archive")
	}

	// A restart over the same store and vault, with every file still queued
	// as a crash between writing them and dequeuing them leaves them,
	// rewrites nothing and records no event twice.
	if _, err := h.db.Exec(`INSERT INTO am_archive_pending (kind, ref_id, seq)
		SELECT kind, ref_id, max(seq) FROM am_archive_events GROUP BY kind, ref_id`); err != nil {
		t.Fatal(err)
	}
	before := git("rev-parse", "HEAD")
	stop = start()
	stop()
	if after := git("rev-parse", "HEAD"); after != before {
		t.Errorf("a restart committed again:\n%s", git("show", "--stat", "HEAD"))
	}
	var f archive.ReservationFile
	if err := readJSON(resFile, &f); err != nil || events(f) != "granted,renewed,released" {
		t.Errorf("after a restart: %+v %v", f, err)
	}
	var left int
	if err := h.db.QueryRow(`SELECT count(*) FROM am_archive_pending`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d files still queued after a clean stop (%v)", left, err)
	}
}
