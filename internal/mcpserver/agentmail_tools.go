package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// addAgentMailTools registers the agent-mail tool set (placeholder: being written).
func addAgentMailTools(s *mcp.Server, svc *agentmail.Service) {}
