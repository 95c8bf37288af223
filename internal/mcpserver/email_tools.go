package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// EmailDeps are the email tool set's dependencies (being written).
type EmailDeps struct{}

func addEmailTools(s *mcp.Server, d *EmailDeps) {}
