package mcpserver

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Products (agentmail/products.go): a product key links projects, so an
// agent's inbox and searches span them. The reference's tool names and
// arguments.

type amEnsureProductIn struct {
	ProductKey string `json:"product_key" jsonschema:"the product's key: 1-128 letters, digits, '.', '_' or '-', e.g. 0123456789abcdef0123 or widget-bus"`
	Name       string `json:"name,omitempty" jsonschema:"the product's name (default: the key); an existing product keeps its name"`
	amCompat
}

type amProductsLinkIn struct {
	ProductKey string `json:"product_key" jsonschema:"product key (or name) from ensure_product"`
	ProjectKey string `json:"project_key" jsonschema:"project's absolute path or slug, to link to the product"`
	amCompat
}

type amFetchProductIn struct {
	ProductKey    string `json:"product_key" jsonschema:"product key (or name) from ensure_product"`
	AgentName     string `json:"agent_name" jsonschema:"your agent name; your inbox in every linked project where an agent has this name"`
	Limit         int    `json:"limit,omitempty" jsonschema:"at most this many messages in all, newest first (default 20, max 1000)"`
	UnreadOnly    bool   `json:"unread_only,omitempty" jsonschema:"only messages not yet marked read"`
	UrgentOnly    bool   `json:"urgent_only,omitempty" jsonschema:"only messages with ack_required"`
	SinceTS       string `json:"since_ts,omitempty" jsonschema:"only messages created after this ISO-8601 time"`
	IncludeBodies bool   `json:"include_bodies,omitempty" jsonschema:"include body_md"`
	amCompat
}

type amSearchProductIn struct {
	ProductKey string `json:"product_key" jsonschema:"product key (or name) from ensure_product"`
	Query      string `json:"query" jsonschema:"as search_messages: words, \"phrases\", prefix*, AND / OR / NOT, (groups), subject:word"`
	Limit      int    `json:"limit,omitempty" jsonschema:"at most this many results in all (default 20)"`
	AgentName  string `json:"agent_name,omitempty" jsonschema:"only messages the agent of this name sent or received, in each linked project"`
	amCompat
}

func (t *amTools) ensureProduct(ctx context.Context, in amEnsureProductIn) (agentmail.ProductView, error) {
	return t.svc.EnsureProduct(ctx, in.ProductKey, in.Name)
}

func (t *amTools) linkProduct(ctx context.Context, in amProductsLinkIn) (agentmail.LinkResult, error) {
	return t.svc.LinkProduct(ctx, in.ProductKey, in.ProjectKey)
}

func (t *amTools) fetchInboxProduct(ctx context.Context, in amFetchProductIn) (any, error) {
	return t.svc.FetchInboxProduct(ctx, agentmail.ProductInboxParams{ProductKey: in.ProductKey, InboxParams: agentmail.InboxParams{
		Agent: in.AgentName, Limit: in.Limit, UnreadOnly: in.UnreadOnly, UrgentOnly: in.UrgentOnly, SinceTS: in.SinceTS, IncludeBodies: in.IncludeBodies}})
}

func (t *amTools) searchProduct(ctx context.Context, in amSearchProductIn) (agentmail.ProductSearchResult, error) {
	return t.svc.SearchProduct(ctx, agentmail.ProductSearchParams{ProductKey: in.ProductKey, Query: in.Query, Limit: in.Limit, Agent: in.AgentName})
}

type amSummarizeProductIn struct {
	ProductKey string `json:"product_key" jsonschema:"product key (or name) from ensure_product"`
	ThreadID   string `json:"thread_id" jsonschema:"thread id (its messages in every linked project), or several separated by commas for a digest"`
	amSummaryOptions
	amCompat
}

func (t *amTools) summarizeProduct(ctx context.Context, in amSummarizeProductIn) (any, error) {
	return t.svc.SummarizeThreadProduct(ctx, in.ProductKey, in.ThreadID, in.IncludeExamples)
}
