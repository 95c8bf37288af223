package agentmail

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNamesAndKeys: what the bound checks accept is bounded and free of
// hidden characters, can be used where it goes (a channel becomes a valid
// thread id, a channels agent's core name stays a valid explicit id), and
// every refusal is readable text.
func FuzzNamesAndKeys(f *testing.F) {
	for _, s := range []string{"/data/projects/app", "/data/pro\x00jects", "/a/\u202eb", "/" + strings.Repeat("a", 1100),
		"broadcast", "backend-team", "x\r\nReply-To: a@b", "coder-1", "Eve\u200b", "\xff", "C:\\work\\app", "-x", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if projectKeyProblem(s) == "" {
			if len(s) > maxProjectKeyBytes || !utf8.ValidString(s) || strings.IndexFunc(s, hiddenRune) >= 0 {
				t.Fatalf("project key %q accepted", s)
			}
		} else if err := checkProjectKey(s); err == nil || !utf8.ValidString(err.Error()) {
			t.Fatalf("project key %q: refusal %v is not readable UTF-8", s, err)
		}
		if ChannelProblem(s) == "" {
			if len(s) > maxChannelBytes || checkThreadID("channel."+s) /* channels.ThreadPrefix */ != nil || strings.IndexFunc(s, hiddenRune) >= 0 {
				t.Fatalf("channel %q accepted but unusable as a thread", s)
			}
		}
		if channelAgentNameProblem(s) == "" {
			core := s + "-" + "0123abcd"
			if len(s) > maxChannelAgentName || strings.ContainsAny(s, " \t\r\n@") || !explicitIDOK(core) {
				t.Fatalf("channels agent name %q accepted", s)
			}
		}
		if patternProblem(s) == "" && strings.IndexFunc(s, hiddenRune) >= 0 {
			t.Fatalf("pattern %q with a hidden character accepted", s)
		}
		// NameProblem must never accept what channel names refuse for
		// hidden characters either.
		if NameProblem(s) == "" && hiddenProblem(s) != "" {
			t.Fatalf("register_agent name %q with a hidden character accepted", s)
		}
	})
}

// explicitIDOK: letters, digits, '.', '_' or '-', starting with a letter
// or digit, at most 128 bytes (register_agent's explicit-id syntax).
func explicitIDOK(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return false
		}
	}
	return true
}
