package main

import (
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock returns the fenced block that follows the marker comment in
// README.md, so that the test runs what README says, not a copy of it.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + "[^\n]*-->\n```[a-z]*\n(.*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("README.md has no block marked %s", marker)
	}
	return string(m[1])
}

// TestREADMEFirstScreen: README opens with what mailgate is, then Install,
// Connect and Try it, in that order, each with a command to copy.
func TestREADMEFirstScreen(t *testing.T) {
	parallel(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	heads := regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatchIndex(string(b), 3)
	want := []string{"Install", "Connect", "Try it"}
	for i, h := range heads {
		if got := string(b[h[2]:h[3]]); got != want[i] {
			t.Fatalf("README section %d is %q, want %q", i+1, got, want[i])
		}
		body := string(b[h[1]:])
		if !regexp.MustCompile("^\\s*(?:[^\n]*\n){0,3}?```sh\nmailgate |^\\s*```sh\ngo install github.com/mailgate/mailgate/cmd/mailgate@latest\n").MatchString(body) {
			t.Errorf("README's %q does not start with a command to copy", want[i])
		}
	}
}

// TestREADMELayoutMatchesTree: README's Layout names every package folder
// under cmd/ and internal/ (a subpackage may be named by its parent's line,
// "internal/agentmail/ … sqlite/ …", or its own), and every path it names
// exists, so a newcomer's map of the tree cannot silently go stale.
func TestREADMELayoutMatchesTree(t *testing.T) {
	parallel(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n## Layout\n.*?```\n(.*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no Layout block")
	}
	layout := string(m[1])
	named := map[string]bool{}
	for _, f := range regexp.MustCompile(`(?m)(?:^|\s)((?:cmd|internal)/[a-z0-9_./-]+/)`).FindAllStringSubmatch(layout, -1) {
		named[strings.TrimSuffix(f[1], "/")] = true
	}
	for p := range named {
		if st, err := os.Stat(filepath.Join("../..", p)); err != nil || !st.IsDir() {
			t.Errorf("README's Layout names %s/, which is not a folder of the tree", p)
		}
	}
	for _, root := range []string{"cmd", "internal"} {
		filepath.WalkDir(filepath.Join("../..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || d.Name() == "testdata" || d.Name() == "migrations" {
				if d != nil && d.IsDir() && (d.Name() == "testdata" || d.Name() == "migrations") {
					return filepath.SkipDir
				}
				return err
			}
			if gofiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gofiles) == 0 {
				return nil
			}
			rel, _ := filepath.Rel("../..", path)
			rel = filepath.ToSlash(rel)
			if named[rel] {
				return nil
			}
			// A subpackage may be described on its parent's line by its
			// last element ("sqlite/ and postgres/ hold the store").
			parent, base := pathpkg.Split(rel)
			if line := layoutLine(layout, strings.TrimSuffix(parent, "/")); line != "" && strings.Contains(line, base+"/") {
				return nil
			}
			t.Errorf("README's Layout does not name %s/", rel)
			return nil
		})
	}
}

// layoutLine returns the Layout entry (its line and continuation lines)
// that starts with dir/, or "".
func layoutLine(layout, dir string) string {
	lines := strings.Split(layout, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, dir+"/ ") {
			continue
		}
		entry := l
		for _, c := range lines[i+1:] {
			if !strings.HasPrefix(c, " ") {
				break
			}
			entry += "\n" + c
		}
		return entry
	}
	return ""
}
