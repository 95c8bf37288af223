package mcpserver

import (
	"reflect"
	"strings"

	"github.com/mailgate/mailgate/internal/config"
)

// ToolAccess is what the HTTP server's roles need to know of a tool
// (httpserver.ToolRule is built from it).
type ToolAccess struct {
	Set, Name string
	ReadOnly  bool
	// ProjectArgs name a project: project_key, human_key and every
	// *_project argument (to_project, from_project).
	ProjectArgs []string
	// AddressArgs are recipient lists whose Name@project entries address
	// another project's agents (send_message's to, cc, bcc).
	AddressArgs []string
	// PathArgs are absolute paths of folders the tool works in (the commit
	// guard's code_repo_path): inside a project's folder.
	PathArgs []string
	// ServerProject: the tool works on the server's one project (the
	// channels and mailbox sets), whatever its arguments.
	ServerProject bool
	// Products: the tool reaches every project linked to the product its
	// product_key names (fetch_inbox_product, …), which no project
	// argument shows.
	Products bool
}

// ToolAccessList is the inventory's tools as ToolAccess. The arguments are
// read off each tool's input type, so a new tool taking a project is
// covered without a list to keep.
func ToolAccessList() []ToolAccess {
	out := make([]ToolAccess, 0, len(inventory))
	for _, e := range inventory {
		a := ToolAccess{Set: e.Set, Name: e.Name, ReadOnly: e.Risk == RiskReadOnly,
			ServerProject: e.Set == config.ToolsChannels || e.Set == config.ToolsMailbox}
		if e.Handler.in != nil {
			accessArgs(e.Handler.in, &a)
		}
		out = append(out, a)
	}
	return out
}

func accessArgs(t reflect.Type, a *ToolAccess) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			accessArgs(f.Type, a)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "project_key" || name == "human_key" || strings.HasSuffix(name, "_project"):
			a.ProjectArgs = append(a.ProjectArgs, name)
		case f.Type == reflect.TypeFor[amStrList]() && (name == "to" || name == "cc" || name == "bcc"):
			a.AddressArgs = append(a.AddressArgs, name)
		case strings.HasSuffix(name, "repo_path"):
			a.PathArgs = append(a.PathArgs, name)
		case name == "product_key":
			a.Products = true
		}
	}
}
