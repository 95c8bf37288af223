package doctor

import (
	"fmt"
	"strings"

	"github.com/mailgate/mailgate/internal/config"
)

// httpAuth says whether `serve --http` with this configuration would run
// without a bearer token (AGENT_MAIL_HTTP_AUTH=none): then every local user
// and process can call the agent-mail tools, which read project files.
func httpAuth(cfg *config.Config) Check {
	c := Check{Name: "http auth"}
	switch {
	case cfg.HTTPAuth == "none":
		c.Status = Warn
		c.Detail = "AGENT_MAIL_HTTP_AUTH=none: serve --http would run without a bearer token, so every local user and process " +
			"could call the agent-mail tools (loopback only; never with the email tools, which refuse to start so)"
		c.Fix = "mailgate config unset AGENT_MAIL_HTTP_AUTH (serve --http then generates and saves a bearer token), unless a client that cannot send one needs it"
	case cfg.BearerToken != "":
		c.Detail = "serve --http requires the bearer token AGENT_MAIL_BEARER_TOKEN"
	default:
		c.Detail = "serve --http requires a bearer token: the first one generates it and saves it in the home's settings file"
	}
	return c
}

// agentProjects lists the agent-mail projects of the store whose folder no
// project may be (/, the home folder, mailgate's home or vault, or a folder
// holding them): ensure_project refuses them now, and no file is read from
// them, but a store made before keeps them.
func (r *run) agentProjects() Check {
	c := Check{Name: "agent projects"}
	db, err := r.openStore()
	if err != nil {
		c.Detail = "not checked: the store does not open"
		return c
	}
	bad, err := r.o.BadProjects(r.ctx, db)
	if err != nil {
		c.Status, c.Detail, c.Fix = Warn, "listing the agent-mail projects: "+err.Error(), "run mailgate doctor again; if it persists, report it"
		return c
	}
	if len(bad) == 0 {
		c.Detail = "no project is /, your home folder, mailgate's home or vault, or a folder holding them"
		return c
	}
	c.Status = Warn
	c.Detail = fmt.Sprintf("%d agent-mail project(s) whose folder no project may be (made before ensure_project refused them; "+
		"attachments are not read from them): %s", len(bad), strings.Join(bad, "; "))
	c.Fix = "have the agents call ensure_project with their own project's folder (a repository of its own) and use that project_key"
	return c
}
