package mcpserver

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/warnings"
)

// SettingsAdmin is what the label, filter and vacation tools
// need from Gmail (issue 27; internal/gmail.Client).
type SettingsAdmin interface {
	GetLabel(ctx context.Context, id string) (gmail.LabelInfo, error)
	NewLabel(ctx context.Context, s gmail.LabelSpec) (gmail.LabelInfo, error)
	PatchLabel(ctx context.Context, id string, s gmail.LabelSpec) (gmail.LabelInfo, error)
	DeleteLabel(ctx context.Context, id string) error
	ListFilters(ctx context.Context) ([]gmail.Filter, error)
	CreateFilter(ctx context.Context, f gmail.Filter) (gmail.Filter, error)
	DeleteFilter(ctx context.Context, id string) error
	GetVacation(ctx context.Context) (gmail.Vacation, error)
	UpdateVacation(ctx context.Context, v gmail.Vacation) (gmail.Vacation, error)
	ForwardingAddresses(ctx context.Context) ([]gmail.ForwardingAddress, error) // create_filter's forward
}

var _ SettingsAdmin = (*gmail.Client)(nil)

// gatedSettings runs a settings change through the gate: one request
// whose description (req.Body) is exactly what do will do (a request that
// does not validate is refused first), then, once the human moved it to
// Approved/, do is called once. Any other call (another
// description) is another request; an approval the human edited is
// refused by the vault (approval/kind_settings.go). ws are shown to the
// approver beside the description (not bound: counts that change as mail
// arrives, say).
func (h *emailCall) gatedSettings(ctx context.Context, tool string, req approval.Request, ws []warnings.Warning,
	do func(context.Context) (gate.SendResult, error)) (*mcp.CallToolResult, gate.Outcome) {
	if err := req.Validate(); err != nil {
		return invalid(err)
	}
	return h.submit(ctx, gate.Call{Tool: tool, Request: req,
		Warnings: func(context.Context) []warnings.Warning { return ws },
		Compose:  gate.Exactly(req, do)})
}

// enumSchema restricts a string property to values (and documents them).
func enumSchema(prop string, values ...string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		p := s.Properties[prop]
		for _, v := range values {
			p.Enum = append(p.Enum, v)
		}
	}
}
