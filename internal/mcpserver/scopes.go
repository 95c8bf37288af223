package mcpserver

import (
	"slices"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/oauthflow"
)

// The OAuth scopes the email tools need (each row's Scope), so that
// mailgate asks Google for what the enabled tools use and no more
// (`mailgate auth`), and `mailgate doctor` can name the tools a token
// leaves out. Reading needs gmail.readonly; drafts gmail.compose; sending
// gmail.send (which gmail.compose also permits, so tokens from before the
// scopes were split still send); changing labels and the trash
// gmail.modify. An invariant test checks that every email tool's row has
// one.

// scopeOrder is the order scopes are asked for and listed in.
var scopeOrder = []string{gmail.ScopeReadonly, gmail.ScopeCompose, gmail.ScopeSend, gmail.ScopeModify, gmail.ScopeSettingsBasic}

// EmailScopes are the scopes the email tool set needs: one per kind of
// tool it serves, narrowest first.
func EmailScopes() []string {
	var out []string
	for _, sc := range scopeOrder {
		for _, e := range inventory {
			if e.Set == config.ToolsEmail && e.Scope == sc {
				out = append(out, sc)
				break
			}
		}
	}
	return out
}

// EmailToolsByScope maps each scope of EmailScopes to the email tools that
// need it, in inventory order.
func EmailToolsByScope() map[string][]string {
	out := map[string][]string{}
	for _, e := range inventory {
		if sc := e.Scope; sc != "" && e.Set == config.ToolsEmail {
			out[sc] = append(out[sc], e.Name)
		}
	}
	return out
}

// EmailToolsLeftOut are the email tools the granted scopes do not permit,
// in inventory order.
func EmailToolsLeftOut(granted []string) []string {
	var out []string
	for _, e := range inventory {
		if sc := e.Scope; sc != "" && e.Set == config.ToolsEmail && !oauthflow.Covers(granted, sc) {
			out = append(out, e.Name)
		}
	}
	return slices.Clip(out)
}
