package doctor

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ClientConfig is an MCP client's configuration file that doctor reads to
// find folders the client's agents can write.
type ClientConfig struct {
	Client string // "Claude Desktop", "Claude Code", …
	Path   string
}

// vaultExposure warns when an agent can likely write the vault: whoever can
// move a file into Approved/ approves an email, so the gate protects
// nothing against an agent with write access there. It checks what is
// cheap to know: a git work tree around the vault (where coding agents
// work), the folders MCP filesystem servers of known clients expose, and
// the project folders Claude Code works in. It cannot see every way an
// agent may write files; the threat model (docs/threat-model.md) says so.
func (r *run) vaultExposure() Check {
	c := Check{Name: "vault exposure"}
	vault := realPath(r.cfg.VaultPath)
	var found []string
	if wt := gitWorkTree(vault); wt != "" {
		found = append(found, fmt.Sprintf("the vault is inside the git work tree %s, where coding agents work", wt))
	}
	var read []string
	for _, cc := range r.o.ClientConfigs {
		exposed, ok := clientExposure(cc, r.home())
		if !ok {
			continue
		}
		read = append(read, cc.Client)
		for _, e := range exposed {
			if within(realPath(e.dir), vault) || within(vault, realPath(e.dir)) {
				found = append(found, fmt.Sprintf("%s (%s) %s %s, which holds the vault", cc.Client, cc.Path, e.how, e.dir))
			}
		}
	}
	if len(found) > 0 {
		c.Status = Warn
		c.Detail = strings.Join(found, "; ") + ": an agent that can write there can move a request into Approved/ and approve its own email"
		c.Fix = "keep the vault out of every folder an agent can write: use the default home (~/.mailgate) or point VAULT_PATH elsewhere, and never give a filesystem server a folder that holds it"
		return c
	}
	c.Detail = "not inside a git work tree"
	if len(read) > 0 {
		c.Detail += "; no filesystem server or project of " + strings.Join(read, ", ") + " holds it"
	}
	return c
}

func (r *run) home() string {
	if r.o.UserHome != "" {
		return r.o.UserHome
	}
	h, _ := os.UserHomeDir()
	return h
}

// gitWorkTree returns the nearest folder above dir (not dir itself: a vault
// that is its own repository, for the agent-mail archive, is mailgate's
// own) that holds .git, or "".
func gitWorkTree(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// exposedDir is a folder a client lets its agents write, and how.
type exposedDir struct{ dir, how string }

// clientExposure reads a client's configuration: the folders given to MCP
// filesystem servers in its mcpServers (top level, or per project as in
// Claude Code's ~/.claude.json), and Claude Code's project folders. ok is
// false when the file does not exist or does not parse.
func clientExposure(cc ClientConfig, userHome string) (dirs []exposedDir, ok bool) {
	b, err := os.ReadFile(cc.Path)
	if err != nil {
		return nil, false
	}
	var doc struct {
		MCPServers map[string]mcpEntry `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]mcpEntry `json:"mcpServers"`
		} `json:"projects"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil, false
	}
	add := func(servers map[string]mcpEntry) {
		for _, n := range slices.Sorted(maps.Keys(servers)) {
			for _, d := range servers[n].filesystemDirs(n, userHome) {
				dirs = append(dirs, exposedDir{d, fmt.Sprintf("gives its filesystem server %q", n)})
			}
		}
	}
	add(doc.MCPServers)
	for _, p := range slices.Sorted(maps.Keys(doc.Projects)) {
		add(doc.Projects[p].MCPServers)
		if filepath.IsAbs(p) && filepath.Dir(p) != p {
			dirs = append(dirs, exposedDir{p, "works in the project folder"})
		}
	}
	return dirs, true
}

// mcpEntry is one server of an mcpServers object.
type mcpEntry struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// filesystemDirs returns the folders given to a filesystem server (the
// reference @modelcontextprotocol/server-filesystem and its look-alikes take
// them as the arguments after the package), "" for other servers.
func (e mcpEntry) filesystemDirs(name, userHome string) []string {
	all := append([]string{e.Command}, e.Args...)
	i := slices.IndexFunc(all, func(a string) bool { return strings.Contains(strings.ToLower(a), "filesystem") })
	if i < 0 {
		if !strings.Contains(strings.ToLower(name), "filesystem") {
			return nil
		}
		i = 0 // named so: every path argument counts
	}
	var dirs []string
	for _, a := range all[i+1:] {
		switch {
		case a == "~" || strings.HasPrefix(a, "~/"):
			if userHome != "" {
				dirs = append(dirs, filepath.Join(userHome, strings.TrimPrefix(a, "~")))
			}
		case filepath.IsAbs(a):
			dirs = append(dirs, filepath.Clean(a))
		}
	}
	return dirs
}

// realPath resolves symlinks in p as far as it exists, so a folder reached
// through a link is recognised.
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if parent := filepath.Dir(p); parent != p {
		return filepath.Join(realPath(parent), filepath.Base(p))
	}
	return p
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
