package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// installEntry writes entry under name into the client's configuration
// file at path, keeping everything else in it: other servers, other keys,
// their order (a person reads and edits this file). The file as it was is
// first copied next to it, to path + ".bak-<UTC time>", and the new file
// replaces it atomically. A file that does not parse is refused and left
// untouched: guessing at a damaged file could lose the user's servers.
// A missing file is created (with its folder). It returns the backup's
// path, "" when there was no file.
func installEntry(client, path, name string, entry claudeServer, now time.Time) (string, error) {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	var out []byte
	if client == clientCodex {
		out, err = mergeCodex(old, name, entry)
	} else {
		raw, merr := json.Marshal(entry)
		if merr != nil {
			return "", merr
		}
		out, err = mergeMCPServers(old, name, raw)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w; nothing was changed (fix the file, or move it away and run this again)", path, err)
	}
	if exists && bytes.Equal(old, out) {
		// The entry is already there as it would be written: a backup of
		// an unchanged file each run would only pile up.
		return "", errEntryUnchanged
	}
	mode := fs.FileMode(0o600)
	backup := ""
	if exists {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		stamp := path + ".bak-" + now.UTC().Format("20060102T150405Z")
		backup = stamp
		for i := 2; ; i++ { // never overwrite an earlier backup
			err := atomicfile.WriteNew(backup, old, mode)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) || i > 100 {
				return "", fmt.Errorf("keeping a backup of %s: %w; nothing was changed", path, err)
			}
			backup = stamp + "-" + strconv.Itoa(i)
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(path, out, mode); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return backup, nil
}

// errEntryUnchanged is installEntry's answer when the file already holds
// the entry as it would be written: nothing was written, no backup made.
var errEntryUnchanged = errors.New("the entry is already there, unchanged")

// member is one key of a JSON object, in file order.
type member struct {
	key string
	val json.RawMessage
}

// objectMembers splits a JSON object into its members, in order.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonErr(data, dec, err)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, jsonErr(data, dec, err)
		}
		for _, m := range ms {
			if m.key == key {
				return nil, fmt.Errorf("the key %q appears twice", key)
			}
		}
		ms = append(ms, member{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON: text after the closing }")
	}
	return ms, nil
}

// jsonErr says where the JSON stopped parsing, as a line number.
func jsonErr(data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	line := 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n"))
	return fmt.Errorf("not valid JSON (line %d: %v)", line, err)
}

// writeObject writes members as an indented JSON object.
func writeObject(b *bytes.Buffer, ms []member, prefix string) error {
	if len(ms) == 0 {
		b.WriteString("{}")
		return nil
	}
	b.WriteString("{\n")
	for i, m := range ms {
		k, _ := json.Marshal(m.key)
		b.WriteString(prefix + "  " + string(k) + ": ")
		if err := json.Indent(b, m.val, prefix+"  ", "  "); err != nil {
			return err
		}
		if i < len(ms)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(prefix + "}")
	return nil
}

// mergeMCPServers sets mcpServers[name] = entry in the JSON object doc
// (empty: a new file), keeping every other key and server in its place.
func mergeMCPServers(doc []byte, name string, entry json.RawMessage) ([]byte, error) {
	var top []member
	if len(bytes.TrimSpace(doc)) > 0 {
		var err error
		if top, err = objectMembers(doc); err != nil {
			return nil, err
		}
	}
	idx := -1
	for i, m := range top {
		if m.key == "mcpServers" {
			idx = i
		}
	}
	var servers []member
	if idx >= 0 {
		var err error
		if servers, err = objectMembers(top[idx].val); err != nil {
			return nil, fmt.Errorf("\"mcpServers\" is %w", err)
		}
	}
	replaced := false
	for i := range servers {
		if servers[i].key == name {
			servers[i].val, replaced = entry, true
		}
	}
	if !replaced {
		servers = append(servers, member{name, entry})
	}
	var sb bytes.Buffer
	if err := writeObject(&sb, servers, ""); err != nil {
		return nil, err
	}
	if idx >= 0 {
		top[idx].val = sb.Bytes()
	} else {
		top = append(top, member{"mcpServers", sb.Bytes()})
	}
	var out bytes.Buffer
	if err := writeObject(&out, top, ""); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// codexTable is entry as a table of Codex's config.toml.
func codexTable(name string, e claudeServer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(name))
	fmt.Fprintf(&b, "command = %s\n", strconv.Quote(e.Command))
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = strconv.Quote(a)
	}
	fmt.Fprintf(&b, "args = [%s]\n", strings.Join(args, ", "))
	if len(e.Env) > 0 {
		var kv []string
		for k, v := range e.Env {
			kv = append(kv, tomlKey(k)+" = "+strconv.Quote(v))
		}
		fmt.Fprintf(&b, "env = { %s }\n", strings.Join(kv, ", "))
	}
	return b.String()
}

var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func tomlKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}

// mergeCodex puts entry's table into Codex's config.toml. The file is
// edited as text, so the user's comments and layout stay: the table
// [mcp_servers.NAME] (and its subtables) is removed where it is and the new
// one appended. The file must parse before, and the result must parse and
// hold the entry; a server defined some other way (an inline table) is
// refused rather than guessed at.
func mergeCodex(doc []byte, name string, e claudeServer) ([]byte, error) {
	var before map[string]any
	if err := decodeTOML(string(doc), &before); err != nil {
		return nil, fmt.Errorf("not valid TOML (%v)", err)
	}
	header := regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*("` + regexp.QuoteMeta(name) + `"|` + regexp.QuoteMeta(name) + `)\s*(\.[^\]]*)?\]\s*(#.*)?$`)
	anyHeader := regexp.MustCompile(`^\s*\[`)
	var kept []string
	skipping := false
	removed := false
	for _, line := range strings.SplitAfter(string(doc), "\n") {
		if anyHeader.MatchString(line) {
			skipping = header.MatchString(strings.TrimRight(line, "\r\n"))
			removed = removed || skipping
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	if servers, ok := before["mcp_servers"].(map[string]any); ok && servers[name] != nil && !removed {
		return nil, fmt.Errorf("mcp_servers.%s is defined in a way this command does not edit (not as a [mcp_servers.%s] table): edit it by hand", name, name)
	}
	// One blank line before the table, however many the removed table
	// left: installing the same entry again gives the same file.
	out := strings.TrimRight(strings.Join(kept, ""), "\n")
	if strings.TrimSpace(out) != "" {
		out += "\n\n"
	} else {
		out = ""
	}
	out += codexTable(name, e)
	var after struct {
		Servers map[string]struct {
			Command string
			Args    []string
		} `toml:"mcp_servers"`
	}
	if err := decodeTOML(out, &after); err != nil || after.Servers[name].Command != e.Command {
		return nil, fmt.Errorf("the file would not hold the entry after the edit (%v): edit it by hand", err)
	}
	return []byte(out), nil
}

// decodeTOML decodes doc into v. The TOML library panics on some malformed
// documents (a parser "BUG" it does not recover itself); that is a file it
// cannot read, reported as an error like any other.
func decodeTOML(doc string, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable: %v", r)
		}
	}()
	_, err = toml.Decode(doc, v)
	return err
}
