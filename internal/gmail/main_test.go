package gmail

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/testutil"
)

// recorders are the gmailschema Recorders of every test of the package
// (newEnvWith adds each): TestMain sums what they saw answered.
var recorders recorderList

type recorderList struct {
	mu  sync.Mutex
	all []*gmailschema.Recorder
}

func (l *recorderList) add(r *gmailschema.Recorder) {
	l.mu.Lock()
	l.all = append(l.all, r)
	l.mu.Unlock()
}

func (l *recorderList) answered() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	sum := map[string]int{}
	for _, r := range l.all {
		for id, n := range r.Answered() {
			sum[id] += n
		}
	}
	return sum
}

// notCalledByClient are the methods the local server implements for its
// own tests and the sandbox that this package's Client never calls.
var notCalledByClient = []string{
	"gmail.users.messages.modify",                     // labels change through batchModify and threads.modify
	"gmail.users.settings.filters.get",                // ListFilters lists them all
	"gmail.users.settings.forwardingAddresses.get",    // ForwardingAddresses lists them all
	"gmail.users.settings.forwardingAddresses.create", // gmail.settings.sharing: service accounts only
	"gmail.users.settings.forwardingAddresses.delete", // likewise
}

// TestMain: after a whole run of the package's tests, every Gmail method
// the local server implements (localgmail.Methods) but those above must
// have been answered to this package's Client through a Recorder, which
// held each answer to Google's discovery document. So a new Gmail call
// fails the run, naming its method, until a test of this package makes it
// (its own test, or a line in TestEveryMethodAnswersGmailShapes); no list
// here grows with the Client.
func TestMain(m *testing.M) {
	flag.Parse()
	testutil.FewerGCs(400)
	cleanup := testutil.MemoryTemp()
	code := m.Run()
	cleanup()
	if code == 0 && wholeRun() {
		if missing := unanswered(recorders.answered()); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: Gmail methods no test of internal/gmail had answered through gmailschema's Recorder: %s\n"+
				"(test the Client method that calls each; a method the Client never calls goes in notCalledByClient, main_test.go)\n",
				strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

// unanswered are the methods the local server implements that answered
// holds none of, less notCalledByClient; and each of notCalledByClient
// that was answered after all, or that the server does not implement (the
// list stays exact).
func unanswered(answered map[string]int) []string {
	var missing []string
	implemented := localgmail.Methods()
	for _, id := range implemented {
		exempt := slices.Contains(notCalledByClient, id)
		switch {
		case answered[id] == 0 && !exempt:
			missing = append(missing, id)
		case answered[id] > 0 && exempt:
			missing = append(missing, id+" (answered: take it out of notCalledByClient)")
		}
	}
	for _, id := range notCalledByClient {
		if !slices.Contains(implemented, id) {
			missing = append(missing, id+" (not implemented by localgmail: take it out of notCalledByClient)")
		}
	}
	return missing
}

// wholeRun: every test ran (no -run, -skip or -list narrowed the run), so
// a method no test answered is one no test makes.
func wholeRun() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}
