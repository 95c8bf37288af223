// Package agentmail is the coordination core for teams of coding agents.
// (placeholder: being written)
package agentmail

// Service is the agent-mail core.
type Service struct{}
