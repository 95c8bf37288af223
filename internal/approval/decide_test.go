package approval

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestDecideRace: deciders racing on one request (two tabs approving and
// rejecting, or a decider and a file move): exactly one wins, the others
// are told where it went, and the file is in exactly one folder.
func TestDecideRace(t *testing.T) {
	t.Parallel()
	for round := 0; round < 20; round++ {
		v, _ := newVault(t, Options{})
		name := pending(t, v, sendReq())
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch i {
				case 0, 1:
					_, errs[i] = v.ApproveAs(name, Decision{Via: ViaPage, From: DirPending})
				case 2:
					_, errs[i] = v.RejectAs(name, Decision{Via: ViaPage, Reason: "no", From: DirPending})
				case 3: // the human's file manager
					errs[i] = os.Rename(v.path(DirPending, name), v.path(DirRejected, name))
				}
			}()
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case i < 3 && !errors.Is(err, ErrDecided):
				t.Fatalf("decider %d: %v, want ErrDecided", i, err)
			}
		}
		in := len(dirNames(t, v, DirApproved)) + len(dirNames(t, v, DirRejected)) + len(dirNames(t, v, DirPending))
		if won != 1 || in != 1 {
			t.Fatalf("round %d: %d winners, the file in %d places (errors %v)", round, won, in, errs)
		}
	}
}

// TestDecideCorrectAndReason: an approval with a corrected subject and body
// is what the gate sends; a rejection's reason reaches the agent's next
// call (the RejectedError), and the file says through which tool.
func TestDecideCorrectAndReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	req := sendReq()
	name := pending(t, v, req)
	subject, body := "Meeting notes (corrected)", "Hi John,\n\nThe notes, corrected.\n"
	if _, err := v.ApproveAs(name, Decision{Via: ViaPage, Subject: &subject, Body: &body, FileSHA256: "00"}); !errors.Is(err, ErrDecided) {
		t.Fatalf("a stale file hash: %v, want ErrDecided", err)
	}
	if _, err := v.ApproveAs(name, Decision{Via: ViaPage, Subject: &subject, Body: &body}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, v.path(DirApproved, name))
	if !strings.Contains(got, `decided_via: "`+ViaPage+`"`) || !strings.HasSuffix(got, BodyMarker+"\n\n"+body) {
		t.Fatalf("approved file:\n%s", got)
	}
	a, err := v.Find(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if a.Final.Subject != subject || a.Final.Body != body || len(a.Edited) != 2 {
		t.Fatalf("final %q %q edited %v", a.Final.Subject, a.Final.Body, a.Edited)
	}

	r2 := replyReq()
	n2 := pending(t, v, r2)
	if _, err := v.RejectAs(n2[:12], Decision{Via: ViaPage, Reason: "wrong tone"}); err != nil {
		t.Fatal(err)
	}
	var re *RejectedError
	if _, err := v.Find(ctx, r2); !errors.As(err, &re) || re.Reason != "wrong tone" || re.Refused {
		t.Fatalf("find after reject: %v", err)
	}
	if _, err := v.ApproveAs(n2, Decision{Via: ViaPage}); err != nil {
		t.Fatalf("a change of mind: %v", err)
	}
	if got := readFile(t, v.path(DirApproved, n2)); strings.Contains(got, "wrong tone") || !strings.Contains(got, "status: approved") {
		t.Fatalf("approved after rejection still says the reason:\n%s", got)
	}
}
