package agentmail

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Bounds and character rules for what agents name: project keys, channel
// names, the names channels clients register, reservation patterns. These
// strings become file names in the archive, header values in the mirror,
// lines in digests and keys in the store, so each is bounded (with the
// limit and the fix in the refusal) and may hold no control character, no
// invisible formatting character (bidirectional overrides, zero-width
// characters) and no line or paragraph separator: what a person reads must
// be what is stored.
const (
	// maxProjectKeyBytes bounds a project key (an absolute path). Linux
	// allows 4096-byte paths, but a key is also a slug, a folder name of
	// the archive and a label of the Gmail mirror; 1024 is far above any
	// real working directory.
	maxProjectKeyBytes = 1024
	// maxChannelBytes bounds a channel name; "channel."+name is a thread id.
	maxChannelBytes = 64
	// maxChannelAgentName bounds the name a channels client registers; a
	// second live holder's core agent is "<name>-<8 hex>".
	maxChannelAgentName = 64
)

// hiddenRune reports a rune that must not appear in a name or key: C0 and
// C1 controls, DEL, format characters (Cf: bidi controls, zero-width
// joiners, soft hyphen), line and paragraph separators, and U+FFFD (what
// invalid UTF-8 decodes to).
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}

// hiddenProblem describes the first hidden rune of s, or returns "".
func hiddenProblem(s string) string {
	if !utf8.ValidString(s) {
		return "it is not valid UTF-8"
	}
	for i, r := range s {
		if hiddenRune(r) {
			return fmt.Sprintf("it contains the control or invisible character U+%04X at byte %d", r, i)
		}
	}
	return ""
}

// projectKeyProblem explains why key cannot be a project key, or "".
func projectKeyProblem(key string) string {
	if len(key) > maxProjectKeyBytes {
		return fmt.Sprintf("it is %d bytes; the limit is %d", len(key), maxProjectKeyBytes)
	}
	return hiddenProblem(key)
}

// checkProjectKey refuses a project key that is too long or holds hidden
// characters, saying what to pass instead.
func checkProjectKey(key string) error {
	if problem := projectKeyProblem(key); problem != "" {
		q := key
		if len(q) > 60 {
			q = strings.ToValidUTF8(q[:60], "") + "…"
		}
		return invalid("Invalid project_key %q: %s. Pass the plain absolute path of the project's working directory (e.g. /data/projects/app).", q, problem)
	}
	return nil
}

var channelPattern = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ChannelProblem explains why name cannot be a channel, or returns "".
func ChannelProblem(name string) string {
	switch {
	case len(name) > maxChannelBytes:
		return fmt.Sprintf("it is %d bytes; the limit is %d", len(name), maxChannelBytes)
	case !channelPattern().MatchString(name):
		return "use letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. broadcast, backend-team)"
	}
	return ""
}

// channelAgentNameProblem applies register_agent's syntax to a name a
// channels client registers: an identity (GreenCastle) or an explicit id
// (coder-1), at most 64 characters. The rules against program, model and
// broadcast names do not apply: channels names are roles chosen by the
// channels client, which register_agent's coercion could not rename.
func channelAgentNameProblem(name string) string {
	switch {
	case len(name) > maxChannelAgentName:
		return fmt.Sprintf("it is %d bytes; the limit is %d", len(name), maxChannelAgentName)
	case strings.ContainsAny(name, " \t\r\n"):
		return "it contains spaces or line breaks (use CamelCase like GreenCastle, or an id like coder-1)"
	case strings.Contains(name, "@"):
		return "it looks like an e-mail address, not an agent identity"
	case !channelPattern().MatchString(name):
		return "use letters, digits, '.', '_' or '-', starting with a letter or digit (like GreenCastle or coder-1)"
	}
	return ""
}

// maxCoreAgentName bounds an agent name the compatibility sets create.
const maxCoreAgentName = 128

// coreAgentNameProblem explains why a compatibility set may not create an
// agent of that name, or returns "".
func coreAgentNameProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "it is empty"
	case len(name) > maxCoreAgentName:
		return fmt.Sprintf("it is %d bytes; the limit is %d", len(name), maxCoreAgentName)
	}
	return hiddenProblem(name)
}

// maxRoleBytes bounds a channels agent's role (shown in messages).
const maxRoleBytes = 256

// roleProblem explains why a channels role cannot be used, or "".
func roleProblem(role string) string {
	if len(role) > maxRoleBytes {
		return fmt.Sprintf("it is %d bytes; the limit is %d", len(role), maxRoleBytes)
	}
	return hiddenProblem(role)
}

// checkPaths bounds the paths of one claim_files, release_files or
// get_file_claims call as file_reservation_paths bounds its own.
func checkPaths(field string, paths []string) error {
	if len(paths) > maxReservePaths {
		return plain(ErrInvalidArgument, "%d %s in one call; the limit is %d: split the call", len(paths), field, maxReservePaths)
	}
	for _, p := range paths {
		if len(p) > maxPatternBytes {
			return plain(ErrInvalidArgument, "%s entry %q… is %d bytes; the limit is %d", field, strings.ToValidUTF8(p[:patternQuoteBytes], ""), len(p), maxPatternBytes)
		}
		if problem := patternProblem(p); problem != "" {
			return plain(ErrInvalidArgument, "%s entry %q is not a usable path: %s", field, p, problem)
		}
	}
	return nil
}

// patternProblem explains why a reservation pattern or claimed path cannot
// be used, or returns "" (its length is checked by the caller, which knows
// its limit).
func patternProblem(p string) string { return hiddenProblem(p) }

// lazyRegexp compiles expr on first use: the package's patterns cost half
// a millisecond to compile, which every process start would otherwise pay,
// whether or not it ever checks a name or summarizes a thread.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
