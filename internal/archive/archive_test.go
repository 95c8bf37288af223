package archive_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/archive"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMain doubles as a writer process of TestConcurrentProcesses.
func TestMain(m *testing.M) { testutil.RunOrChild(m, "ARCHIVE_CHILD_ROOT", child) }

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

func msg(id int64, thread string) *outbox.Message {
	return &outbox.Message{ID: id, ProjectID: 1, ProjectSlug: "data-projects-app", ThreadKey: thread, ThreadID: thread,
		From: "BlueLake", To: []string{"GreenCastle"}, Subject: "Subject " + strconv.FormatInt(id, 10),
		BodyMD: "body " + strconv.FormatInt(id, 10), Importance: "normal", CreatedAt: t0.Add(time.Duration(id) * time.Second)}
}

// TestRoundTrip: a message file parses back to the same message, whatever
// characters the agent used.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(m *outbox.Message)
	}{
		{"plain", func(*outbox.Message) {}},
		{"yaml-hostile subject", func(m *outbox.Message) { m.Subject = `Re: "quoted": [x] {y} # not a comment & <tag>` }},
		{"body with frontmatter fences", func(m *outbox.Message) { m.BodyMD = "---\nid: 99\n---\n\n# Heading\n\n- é ü 日本\n" }},
		{"no trailing newline, cc, ack, urgent", func(m *outbox.Message) {
			m.BodyMD, m.CC, m.AckRequired, m.Importance = "last line", []string{"RedStone", "Owl"}, true, "urgent"
		}},
		{"empty body, thread id with dots", func(m *outbox.Message) { m.BodyMD, m.ThreadKey = "", "TKT-1.2_x" }},
		{"subject with newline", func(m *outbox.Message) { m.Subject = "line one\nline two" }},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &archive.Archive{Root: t.TempDir()}
			m := msg(int64(i+1), "T1")
			tc.edit(m)
			if err := a.Write(m); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(a.MessagePath(m))
			if err != nil {
				t.Fatal(err)
			}
			rec, body, err := archive.ParseMessage(data)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			want := archive.Record{ID: m.ID, Project: m.ProjectSlug, From: m.From, To: m.To, CC: m.CC, ThreadID: m.ThreadKey,
				Subject: m.Subject, Importance: m.Importance, AckRequired: m.AckRequired, CreatedTS: m.CreatedAt.Format("2006-01-02T15:04:05.000000+00:00")}
			if want.CC == nil {
				want.CC = []string{}
			}
			if !reflect.DeepEqual(rec, want) {
				t.Errorf("frontmatter\n got %+v\nwant %+v", rec, want)
			}
			if body != m.BodyMD {
				t.Errorf("body %q, want %q", body, m.BodyMD)
			}
			wantDir := filepath.Join(a.Root, "AgentMail", "data-projects-app", "messages", "2026", "11")
			if filepath.Dir(a.MessagePath(m)) != wantDir {
				t.Errorf("archived in %s, want %s", filepath.Dir(a.MessagePath(m)), wantDir)
			}
		})
	}
}

// TestDigestOrdered: the digest lists a thread's messages oldest first
// whatever order they are archived in, once each, however often repeated.
func TestDigestOrdered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		order []int64
	}{
		{"in order", []int64{1, 2, 3, 4}},
		{"reversed", []int64{4, 3, 2, 1}},
		{"shuffled with repeats", []int64{3, 1, 3, 4, 2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &archive.Archive{Root: t.TempDir()}
			for _, id := range tc.order {
				if err := a.Write(msg(id, "T1")); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(a.ThreadPath(msg(1, "T1")))
			if err != nil {
				t.Fatal(err)
			}
			if got := archive.DigestIDs(data); !reflect.DeepEqual(got, []int64{1, 2, 3, 4}) {
				t.Errorf("digest ids %v, want [1 2 3 4]\n%s", got, data)
			}
		})
	}
}

// child writes messages id ≡ ARCHIVE_CHILD_INDEX (mod ARCHIVE_CHILD_N), in
// descending order, all into one thread.
func child(root string) int {
	idx, _ := strconv.Atoi(os.Getenv("ARCHIVE_CHILD_INDEX"))
	n, _ := strconv.Atoi(os.Getenv("ARCHIVE_CHILD_N"))
	total, _ := strconv.Atoi(os.Getenv("ARCHIVE_CHILD_TOTAL"))
	a := &archive.Archive{Root: root}
	for id := total; id >= 1; id-- {
		if id%n != idx {
			continue
		}
		if err := a.Write(msg(int64(id), "shared")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestConcurrentProcesses: several processes archiving messages of one
// thread at once: every message file is whole and the digest holds every
// message once, in order.
func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	const procs, total = 4, 60
	root := t.TempDir()
	var cmds []*exec.Cmd
	for i := range procs {
		cmds = append(cmds, testutil.ChildCommand(t, "ARCHIVE_CHILD_ROOT="+root, "ARCHIVE_CHILD_INDEX="+strconv.Itoa(i),
			"ARCHIVE_CHILD_N="+strconv.Itoa(procs), "ARCHIVE_CHILD_TOTAL="+strconv.Itoa(total)))
	}
	testutil.RunChildren(t, cmds...)
	a := &archive.Archive{Root: root}
	data, err := os.ReadFile(a.ThreadPath(msg(1, "shared")))
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for id := int64(1); id <= total; id++ {
		want = append(want, id)
		f, err := os.ReadFile(a.MessagePath(msg(id, "shared")))
		if err != nil {
			t.Fatal(err)
		}
		if rec, _, err := archive.ParseMessage(f); err != nil || rec.ID != id {
			t.Errorf("message %d: %+v, %v", id, rec, err)
		}
	}
	if got := archive.DigestIDs(data); !slices.Equal(got, want) {
		t.Errorf("digest ids %v, want 1..%d", got, total)
	}
}

// TestFromStore: the archive sink, fed by the outbox, archives every
// message sent through the agent-mail service (including those sent
// before it started).
func TestFromStore(t *testing.T) {
	t.Parallel()
	a := newAgents(t, "/data/projects/app")
	ids := []int64{a.send(t, "BlueLake", "GreenCastle", "hello")}
	vault := t.TempDir()
	stop := a.archive(t, vault, outbox.WorkerOptions{Poll: 40 * time.Millisecond})
	defer stop()
	ids = append(ids, a.send(t, "BlueLake", "GreenCastle", "hello"), a.send(t, "BlueLake", "GreenCastle", "hello"))
	digest := filepath.Join(vault, "AgentMail", "data-projects-app", "threads", "TKT-1.md")
	testutil.Eventually(t, 10*time.Second, func() error {
		data, _ := os.ReadFile(digest)
		if got := archive.DigestIDs(data); !slices.Equal(got, ids) {
			return fmt.Errorf("digest ids %v, want %v", got, ids)
		}
		return nil
	})
}

// TestParseMessageYAMLOnly: an archived file is read as YAML front matter
// only; TOML (+++) never reaches the TOML parser, which can panic on
// malformed input.
func TestParseMessageYAMLOnly(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		"+++\nproject = \"x\"\n+++\nbody\n",
		"+++\na = [[[\n+++\nbody\n",
	} {
		if _, _, err := archive.ParseMessage([]byte(data)); err == nil {
			t.Errorf("ParseMessage(%q) accepted TOML front matter", data)
		}
	}
}
