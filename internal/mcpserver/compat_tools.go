package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addChannelsTools registers the channels compatibility set (placeholder: being written).
func addChannelsTools(s *mcp.Server, d Deps) {}

// addMailboxTools registers the mailbox compatibility set (placeholder: being written).
func addMailboxTools(s *mcp.Server, d Deps) {}
