package mcpserver

import (
	"slices"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/oauthflow"
)

// The OAuth scope each email tool needs, so that mailgate asks Google for
// what the enabled tools use and no more (`mailgate auth`), and `mailgate
// doctor` can name the tools a token leaves out. Reading needs
// gmail.readonly; drafts gmail.compose; sending gmail.send (which
// gmail.compose also permits, so tokens from before this table still send);
// changing labels and the trash gmail.modify. An invariant test checks that
// every email tool of the inventory has its row.
var emailToolScopes = map[string]string{
	"search_email":   gmail.ScopeReadonly,
	"read_email":     gmail.ScopeReadonly,
	"read_thread":    gmail.ScopeReadonly,
	"get_attachment": gmail.ScopeReadonly,
	"list_labels":    gmail.ScopeReadonly,
	"draft_email":    gmail.ScopeCompose,
	"list_drafts":    gmail.ScopeCompose,
	"update_draft":   gmail.ScopeCompose,
	"send_draft":     gmail.ScopeCompose, // drafts.send: gmail.send does not permit it
	"send_email":     gmail.ScopeSend,
	"reply_email":    gmail.ScopeSend,
	"forward_email":  gmail.ScopeSend,
	"modify_labels":  gmail.ScopeModify,
	"untrash_email":  gmail.ScopeModify,
	"trash_email":    gmail.ScopeModify,
	// Issue 27. Labels: gmail.labels would do, but gmail.modify (asked
	// for modify_labels) permits them too, so no scope is added. Filters
	// and the vacation responder are read with gmail.readonly and changed
	// with gmail.settings.basic, which nothing else grants.
	"create_label":  gmail.ScopeModify,
	"rename_label":  gmail.ScopeModify,
	"delete_label":  gmail.ScopeModify,
	"list_filters":  gmail.ScopeReadonly,
	"create_filter": gmail.ScopeSettingsBasic,
	"delete_filter": gmail.ScopeSettingsBasic,
	"get_vacation":  gmail.ScopeReadonly,
	"set_vacation":  gmail.ScopeSettingsBasic,
	"find_contact":  gmail.ScopeReadonly, // the headers search_email reads: no contacts scope
	"unsubscribe":   gmail.ScopeSend,     // a mailto unsubscribe is a send; the one-click POST needs no scope
}

// scopeOrder is the order scopes are asked for and listed in.
var scopeOrder = []string{gmail.ScopeReadonly, gmail.ScopeCompose, gmail.ScopeSend, gmail.ScopeModify, gmail.ScopeSettingsBasic}

// EmailScopes are the scopes the email tool set needs: one per kind of
// tool it serves, narrowest first.
func EmailScopes() []string {
	var out []string
	for _, sc := range scopeOrder {
		for _, e := range inventory {
			if e.Set == config.ToolsEmail && emailToolScopes[e.Name] == sc {
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
		if sc, ok := emailToolScopes[e.Name]; ok && e.Set == config.ToolsEmail {
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
		if sc, ok := emailToolScopes[e.Name]; ok && e.Set == config.ToolsEmail && !oauthflow.Covers(granted, sc) {
			out = append(out, e.Name)
		}
	}
	return slices.Clip(out)
}
