package config

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// EnsureHome creates the home folder, readable by its owner only (it holds
// the Gmail token and the vault, where a file move approves an email). An
// existing folder is left as it is: doctor reports loose permissions.
func (c *Config) EnsureHome() error {
	if err := os.MkdirAll(c.Home, 0o700); err != nil {
		return &Error{Var: "MAILGATE_HOME", Msg: fmt.Sprintf("creating %s: %v", c.Home, err)}
	}
	return nil
}

// legacyMarkers are the files and folders that show a folder was used as a
// mailgate home (the old default was the working directory). A clone of
// the repository has vault/, auth/ and audit/ with only a README each, so
// the folders alone do not count.
var legacyMarkers = []string{
	filepath.Join("vault", "Pending_Approval"),
	filepath.Join("vault", "Approved"),
	filepath.Join("vault", "Rejected"),
	filepath.Join("vault", "Done"),
	filepath.Join("vault", "Logs"),
	filepath.Join("auth", "token.json"),
	filepath.Join("auth", "credentials.json"),
	filepath.Join(".mailgate", "state.db"),
}

// LegacyHome returns what in dir shows it was used as a mailgate home
// before the home stopped being the working directory, or nil. dir is not
// a legacy home when it is c.Home, or inside it, or when MAILGATE_HOME was
// given.
func (c *Config) LegacyHome(dir string) []string {
	if !c.HomeIsDefault || dir == "" || within(c.Home, dir) {
		return nil
	}
	var found []string
	for _, m := range legacyMarkers {
		// Run from the user's home folder, .mailgate/state.db is the
		// home's own store, not a sign of an older one.
		if p := filepath.Join(dir, m); !within(c.Home, p) && exists(p) {
			found = append(found, m)
		}
	}
	return found
}

// within reports whether path is dir or inside it (both absolute, clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Settable reports whether name may be written into the home's settings
// file: a setting of Vars other than MAILGATE_HOME (the file is found
// through the home, so it cannot move it).
func Settable(name string) bool {
	return name != "MAILGATE_HOME" && slices.ContainsFunc(Vars, func(v Var) bool { return v.Name == name })
}

// FlagVar returns the variable a configuration flag sets ("dev-mode" →
// DEV_MODE), "" when flag is not one.
func FlagVar(flag string) string {
	for _, v := range Vars {
		if v.Flag != "" && v.Flag == flag {
			return v.Name
		}
	}
	return ""
}

var settingLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=`) })

// WriteSetting sets name to value in the settings file at path (value ""
// removes it), keeping every other line, comments included, and creating
// the file (0600) and its folder (0700) when missing. The file is replaced
// atomically, so a server reading it at start sees the old or the new one.
// The caller validates the value (see Load). MAILGATE_HOME can only be
// removed: a home's settings file cannot point elsewhere.
func WriteSetting(path, name, value string) error {
	if !Settable(name) && (name != "MAILGATE_HOME" || value != "") {
		return &Error{Var: name, Msg: "is not a setting of the home's settings file"}
	}
	if strings.ContainsAny(value, "\r\n") {
		return &Error{Var: name, Msg: "a value cannot hold a line break"}
	}
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	q, ok := quoteSetting(value)
	if !ok {
		return &Error{Var: name, Msg: fmt.Sprintf("%q mixes quotes and backslashes in a way a .env file cannot hold: edit %s by hand", value, path)}
	}
	line := name + "=" + q
	var out bytes.Buffer
	done := value == ""
	sc := bufio.NewScanner(bytes.NewReader(old))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := settingLine().FindStringSubmatch(l); m != nil && m[1] == name {
			if !done {
				out.WriteString(line + "\n")
				done = true
			}
			continue // every other line for name goes: one value, no surprise
		}
		out.WriteString(l + "\n")
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if !done {
		out.WriteString(line + "\n")
	}
	// The file is rewritten line by line; check that it reads back as the
	// old one with only name changed (a multi-line value, or a line the
	// parser tolerated only at the end, could otherwise shift meaning).
	before, _ := godotenv.UnmarshalBytes(old)
	after, perr := godotenv.UnmarshalBytes(out.Bytes())
	if perr != nil || !sameBut(before, after, name, value) {
		return &Error{Var: name, Msg: fmt.Sprintf("%s has lines mailgate cannot rewrite safely: edit it by hand", path)}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, out.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// sameBut reports whether after is before with name set to value (or
// removed, for "").
func sameBut(before, after map[string]string, name, value string) bool {
	for k, v := range before {
		if w, ok := after[k]; k != name && (!ok || w != v) {
			return false
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && k != name {
			return false
		}
	}
	got, ok := after[name]
	if value == "" {
		return !ok
	}
	return ok && got == value
}

var plainValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:@,~+%-]*$`) })

// quoteSetting writes value so godotenv reads it back unchanged, or says
// it cannot: godotenv's escapes in double quotes do not round-trip.
func quoteSetting(value string) (string, bool) {
	switch {
	case plainValue().MatchString(value):
		return value, true
	case !strings.Contains(value, "'"):
		return "'" + value + "'", true
	case !strings.ContainsAny(value, `\"$`):
		return `"` + value + `"`, true
	}
	return "", false
}
