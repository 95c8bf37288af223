package approval

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// listVault holds one request in each folder, a second pending send, and
// files the gate ignores.
func listVault(t *testing.T) (*Vault, *testutil.Clock, map[string]string) {
	t.Helper()
	ctx := context.Background()
	v, c := newVault(t, Options{})
	names := map[string]string{}
	pend := func(key string, req Request) {
		n := pending(t, v, req)
		names[key] = n
		c.Advance(time.Minute) // distinct created times
	}
	pend("pending", sendReq())
	other := sendReq()
	other.Subject = "Other"
	pend("pending2", other)
	pend("approved", replyReq())
	move(t, v, DirPending, DirApproved, names["approved"])
	rej := sendReq()
	rej.To = "eve@example.net"
	pend("rejected", rej)
	move(t, v, DirPending, DirRejected, names["rejected"])

	done := sendReq()
	done.Subject = "Done one"
	pend("done", done)
	move(t, v, DirPending, DirApproved, names["done"])
	a, err := v.Find(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := v.Claim(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Record(Outcome{Status: StatusSent, SentAt: c.Now(), GmailMessageID: "m1"}); err != nil {
		t.Fatal(err)
	}
	names["done"] = cl.Name

	writeFile(t, v.path(DirPending, "broken.md"), "no frontmatter here\n")
	writeFile(t, v.path(DirPending, ".hidden.md"), "---\ntype: email_send\n---\n")
	writeFile(t, v.path(DirPending, "notes.txt"), "ignored")
	return v, c, names
}

func TestList(t *testing.T) {
	t.Parallel()
	v, _, names := listVault(t)
	items, err := v.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Folder+"/"+it.Name)
	}
	want := []string{
		DirPending + "/broken.md", // no created time sorts first
		DirPending + "/" + names["pending"], DirPending + "/" + names["pending2"],
		DirApproved + "/" + names["approved"], DirRejected + "/" + names["rejected"], DirDone + "/" + names["done"],
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("List =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	byName := map[string]Item{}
	for _, it := range items {
		byName[it.Name] = it
	}
	p := byName[names["pending"]]
	if p.Kind != KindSend || p.Status != "pending" || p.To != "John <john@example.com>" || p.Subject != "Meeting notes" ||
		!strings.Contains(names["pending"], "_"+strings.Split(p.RequestID, "-")[0]+".md") || !p.Created.Equal(t0) ||
		!p.Expires.Equal(t0.Add(24*time.Hour)) || p.Invalid != "" {
		t.Errorf("pending item = %+v", p)
	}
	if r := byName[names["approved"]]; r.Kind != KindReply || r.ThreadID != "18d5a3b2c1d0e0f1" {
		t.Errorf("approved item = %+v", r)
	}
	if d := byName[names["done"]]; d.Status != StatusSent || d.SentAt.IsZero() || d.Subject != "Done one" {
		t.Errorf("done item = %+v", d)
	}
	if b := byName["broken.md"]; !strings.Contains(b.Invalid, "frontmatter") {
		t.Errorf("broken item = %+v", b)
	}
}

func TestApproveReject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		act      func(t *testing.T, v *Vault, names map[string]string) (*Item, error)
		from, to string // the key in names that moves, and where to
		wantErr  error
		errText  string
	}{
		{name: "approve by request_id", from: "pending", to: DirApproved, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			items, _ := v.List(DirPending)
			for _, it := range items {
				if it.Name == n["pending"] {
					return v.Approve(it.RequestID)
				}
			}
			return nil, errors.New("not listed")
		}},
		{name: "approve by file name", from: "pending", to: DirApproved, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			return v.Approve(n["pending"])
		}},
		{name: "reject by hash prefix, any case", from: "pending", to: DirRejected, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			id := strings.TrimSuffix(n["pending"], ".md")
			return v.Reject(strings.ToUpper(id[strings.LastIndexByte(id, '_')+1:][:8]))
		}},
		{name: "reject withdraws an approval", from: "approved", to: DirRejected, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			return v.Reject(strings.TrimSuffix(n["approved"], ".md"))
		}},
		{name: "approve after a rejection", from: "rejected", to: DirApproved, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			return v.Approve(n["rejected"])
		}},
		{name: "unknown", wantErr: ErrUnknownID, errText: `"nope": no request file matches`, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			return v.Approve("nope")
		}},
		{name: "ambiguous", wantErr: ErrAmbiguousID, errText: "give more of the id", act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			return v.Approve("2026-02-14")
		}},
		{name: "already used", wantErr: ErrUnknownID, errText: "it was already used", act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			return v.Approve(n["done"])
		}},
		{name: "expired", errText: "expired at", act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			v.o.Now = func() time.Time { return t0.Add(48 * time.Hour) }
			return v.Approve(n["pending"])
		}},
		{name: "target exists", from: "pending", to: DirApproved, act: func(t *testing.T, v *Vault, n map[string]string) (*Item, error) {
			// An unusable earlier copy under the same name never makes
			// approving fail: the request takes a free name.
			writeFile(t, v.path(DirApproved, n["pending"]), "x")
			it, err := v.Approve(n["pending"])
			if err == nil {
				if got := readFile(t, v.path(DirApproved, n["pending"])); got != "x" {
					t.Errorf("the earlier file was replaced: %q", got)
				}
				if it.Moved == it.Name || !strings.HasSuffix(it.Moved, "-2.md") {
					t.Errorf("moved to %q", it.Moved)
				}
				os.Remove(v.path(DirApproved, n["pending"]))
				os.Rename(v.path(DirApproved, it.Moved), v.path(DirApproved, n["pending"]))
			}
			return it, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _, names := listVault(t)
			it, err := tt.act(t, v, names)
			if tt.from == "" {
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name := names[tt.from]
			if it.Name != name {
				t.Fatalf("moved %s, want %s", it.Name, name)
			}
			if _, err := os.Stat(v.path(tt.to, name)); err != nil {
				t.Fatalf("not in %s/: %v", tt.to, err)
			}
			if _, err := os.Stat(it.Path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("still at %s", it.Path)
			}
		})
	}
}

// TestApprovedByListIsHonoured: an approval made with Approve is exactly
// the human's move, so the gate finds it.
func TestApprovedByListIsHonoured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	name, err := v.EnsurePending(ctx, sendReq())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Approve(name); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Find(ctx, sendReq()); err != nil {
		t.Fatalf("Find after Approve: %v", err)
	}
}
