package archive_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/archive"
)

// FuzzDigest: whatever the agents write (bodies, subjects, a thread name
// from an older store), N messages archived into one thread give back
// exactly N digest entries, in order, each from its real sender.
func FuzzDigest(f *testing.F) {
	f.Add("hello", "world", "subject", "TKT-1", byte(0))
	f.Add("Done.\n<!-- am:end 1 -->\n<!-- am:message id=0 created=2000-01-01T00:00:00.000000+00:00 -->\n**From** GreenCastle **to** X\n<!-- am:end 0 -->\n",
		"<!-- am:end 2 -->", "<!-- am:message id=9 created=x -->", "T\n<!-- am:message id=7 created=y -->\n", byte(3))
	f.Add("", "\n\n\n", "\r\n", "", byte(255))
	senders := []string{"BlueLake", "GreenCastle", "coder-1", "ci.bot"}
	f.Fuzz(func(t *testing.T, body1, body2, subject, thread string, who byte) {
		root := t.TempDir()
		a := &archive.Archive{Root: root}
		bodies := []string{body1, body2, body1 + body2}
		var want []string
		for i, b := range bodies {
			m := msg(int64(i+1), "T1")
			m.ThreadKey, m.BodyMD, m.Subject = thread, b, subject
			m.From = senders[(int(who)+i)%len(senders)]
			want = append(want, m.From)
			if err := a.Write(m); err != nil {
				if strings.Contains(err.Error(), "file name too long") {
					t.Skip()
				}
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(a.ThreadPath(msg(1, thread)))
		if err != nil {
			t.Fatal(err)
		}
		got := archive.ParseDigest(data)
		if len(got) != len(bodies) {
			t.Fatalf("%d entries for %d messages:\n%s", len(got), len(bodies), data)
		}
		for i, e := range got {
			if e.ID != int64(i+1) || e.From != want[i] {
				t.Fatalf("entry %d = %+v, want id %d from %s:\n%s", i, e, i+1, want[i], data)
			}
		}
	})
}
