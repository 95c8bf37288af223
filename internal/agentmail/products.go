package agentmail

// Products: a product key links projects (the system overview's
// "Multi-project — unified inbox/search across linked repos"), with the
// reference's tools: ensure_product, products_link, fetch_inbox_product and
// search_messages_product. Linking changes no permission: an inbox across
// the product is the union of the agent's own inboxes in the linked
// projects (delivered copies only, so mail a contact policy holds stays
// held), a search runs the project search (Search) in each linked project,
// and a send from one linked project to another still goes through the
// recipient's contact policy.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Product is a named group of projects.
type Product struct {
	ID        int64
	UID       string
	Name      string
	CreatedAt time.Time
}

// ProductTx reads and writes products and their links.
type ProductTx interface {
	// ProductByKey finds a product by its uid, else by its name.
	ProductByKey(ctx context.Context, key string) (Product, error)
	// InsertProduct stores p and sets p.ID (ErrConflict when the uid is taken).
	InsertProduct(ctx context.Context, p *Product) error
	// LinkProduct links a project to a product (linking twice is a no-op).
	LinkProduct(ctx context.Context, productID, projectID int64, at time.Time) error
	// ProductProjects lists a product's projects by id.
	ProductProjects(ctx context.Context, productID int64) ([]Project, error)
}

// ProductView is ensure_product's answer (and resource://product/{key}'s
// head).
type ProductView struct {
	ID         int64   `json:"id"`
	ProductUID string  `json:"product_uid"`
	Name       string  `json:"name"`
	CreatedAt  *string `json:"created_at"`
}

// ProductRef and ProjectRef are products_link's short forms.
type ProductRef struct {
	ID         int64  `json:"id"`
	ProductUID string `json:"product_uid"`
	Name       string `json:"name"`
}

type ProjectRef struct {
	ID       int64  `json:"id"`
	Slug     string `json:"slug"`
	HumanKey string `json:"human_key"`
}

// LinkResult is products_link's answer.
type LinkResult struct {
	Product ProductRef `json:"product"`
	Project ProjectRef `json:"project"`
	Linked  bool       `json:"linked"`
}

// ProductDetail is a product with its projects.
type ProductDetail struct {
	ProductView
	Projects []ProjectView `json:"projects"`
}

// ProductSearchHit is one search_messages_product result: the reference's
// fields, with the project the message belongs to.
type ProductSearchHit struct {
	ID          int64   `json:"id"`
	Subject     string  `json:"subject"`
	Importance  string  `json:"importance"`
	AckRequired int     `json:"ack_required"`
	ProjectID   int64   `json:"project_id"`
	CreatedTS   *string `json:"created_ts"`
	ThreadID    *string `json:"thread_id"`
	From        string  `json:"from"`
}

// ProductSearchResult is search_messages_product's answer.
type ProductSearchResult struct {
	Result      []ProductSearchHit `json:"result"`
	Diagnostics *SearchDiagnostics `json:"diagnostics,omitempty"`
}

var productKeyPattern = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func checkProductKey(key string) error {
	if key == "" {
		return invalid("product_key is required: a short key naming the product, e.g. 0123456789abcdef0123 or widget-bus")
	}
	if !productKeyPattern().MatchString(key) {
		return invalid("product_key %q is not valid: use 1–128 letters, digits, '.', '_' or '-', starting with a letter or digit", key)
	}
	return nil
}

func productNotFound(key string) error {
	return newError("NOT_FOUND", ErrNotFound, "Product not found: %q. Call ensure_product with this product_key first.", key)
}

// EnsureProduct creates the product key (named name, default the key) or
// returns the existing one unchanged.
func (s *Service) EnsureProduct(ctx context.Context, key, name string) (ProductView, error) {
	key, name = strings.TrimSpace(key), strings.TrimSpace(name)
	if err := checkProductKey(key); err != nil {
		return ProductView{}, err
	}
	if name == "" {
		name = key
	}
	if n, problem := len(name), hiddenProblem(name); n > 256 || problem != "" {
		return ProductView{}, invalid("product name cannot be used: at most 256 bytes without control or invisible characters")
	}
	var p Product
	err := s.st.Write(ctx, func(tx Tx) error {
		var err error
		if p, err = tx.ProductByKey(ctx, key); err == nil || !errors.Is(err, ErrNotFound) {
			return err
		}
		p = Product{UID: key, Name: name, CreatedAt: s.clock()}
		return tx.InsertProduct(ctx, &p)
	})
	if err != nil {
		return ProductView{}, fmt.Errorf("ensuring product: %w", err)
	}
	return productView(p), nil
}

func productView(p Product) ProductView {
	return ProductView{ID: p.ID, ProductUID: p.UID, Name: p.Name, CreatedAt: ts(p.CreatedAt)}
}

// LinkProduct links a project to a product.
func (s *Service) LinkProduct(ctx context.Context, productKey, projectKey string) (LinkResult, error) {
	var out LinkResult
	err := s.st.Write(ctx, func(tx Tx) error {
		prod, err := s.product(ctx, tx, productKey)
		if err != nil {
			return err
		}
		proj, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		if err := tx.LinkProduct(ctx, prod.ID, proj.ID, s.clock()); err != nil {
			return err
		}
		out = LinkResult{Product: ProductRef{ID: prod.ID, ProductUID: prod.UID, Name: prod.Name},
			Project: ProjectRef{ID: proj.ID, Slug: proj.Slug, HumanKey: proj.HumanKey}, Linked: true}
		return nil
	})
	if err != nil {
		return LinkResult{}, fmt.Errorf("linking project to product: %w", err)
	}
	return out, nil
}

func (s *Service) product(ctx context.Context, tx Tx, key string) (Product, error) {
	key = strings.TrimSpace(key)
	if err := checkProductKey(key); err != nil {
		return Product{}, err
	}
	p, err := tx.ProductByKey(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return Product{}, productNotFound(key)
	}
	return p, err
}

// ProductDetail returns a product with its linked projects.
func (s *Service) ProductDetail(ctx context.Context, key string) (ProductDetail, error) {
	var out ProductDetail
	err := s.st.Read(ctx, func(tx Tx) error {
		prod, err := s.product(ctx, tx, key)
		if err != nil {
			return err
		}
		projs, err := tx.ProductProjects(ctx, prod.ID)
		if err != nil {
			return err
		}
		out = ProductDetail{ProductView: productView(prod), Projects: viewsOf(projs, projectView)}
		return nil
	})
	if err != nil {
		return ProductDetail{}, fmt.Errorf("reading product: %w", err)
	}
	return out, nil
}

// productProjects resolves a product key to its linked projects.
func (s *Service) productProjects(ctx context.Context, key string) ([]Project, error) {
	var projs []Project
	err := s.st.Read(ctx, func(tx Tx) error {
		prod, err := s.product(ctx, tx, key)
		if err != nil {
			return err
		}
		projs, err = tx.ProductProjects(ctx, prod.ID)
		return err
	})
	return projs, err
}

// ProductInboxParams are fetch_inbox_product's inputs: InboxParams with a
// product key instead of a project key.
type ProductInboxParams struct {
	ProductKey string
	InboxParams
}

// FetchInboxProduct lists the delivered mail of the agent of that name in
// each linked project (each project's agent of the name is its own
// identity, as in the reference), newest first, at most Limit in all.
// Projects where no agent has the name are skipped; none at all is
// Agent 'X' not found.
func (s *Service) FetchInboxProduct(ctx context.Context, p ProductInboxParams) ([]FetchEntry, error) {
	projs, err := s.productProjects(ctx, p.ProductKey)
	if err != nil {
		return nil, fmt.Errorf("fetching product inbox: %w", err)
	}
	q, err := inboxQuery(p.InboxParams)
	if err != nil {
		return nil, err
	}
	out := []FetchEntry{}
	found := false
	for _, proj := range projs {
		ip := p.InboxParams
		ip.ProjectKey = proj.HumanKey
		es, err := s.FetchInbox(ctx, ip)
		if errors.Is(err, ErrAgentNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		out = append(out, es...)
	}
	if !found {
		return nil, newError("NOT_FOUND", ErrAgentNotFound, "Agent '%s' not found in any project linked to product '%s'.", strings.TrimSpace(p.Agent), p.ProductKey)
	}
	// Message ids grow with time across every project of a store.
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// ProductSearchParams are search_messages_product's inputs.
type ProductSearchParams struct {
	ProductKey string
	Query      string
	Limit      int
	Agent      string // optional: only mail this agent (in each project) sent or had delivered
}

// SearchProduct runs Search in every linked project and merges the results
// by rank: each project's best, then each one's second, and so on (newest
// first among equals), at most Limit in all. Relevance scores of separate
// searches are not comparable, so ranks are what is merged.
func (s *Service) SearchProduct(ctx context.Context, p ProductSearchParams) (ProductSearchResult, error) {
	projs, err := s.productProjects(ctx, p.ProductKey)
	if err != nil {
		return ProductSearchResult{}, fmt.Errorf("searching product: %w", err)
	}
	limit := listLimit(p.Limit)
	type ranked struct {
		hit  ProductSearchHit
		rank int
	}
	var all []ranked
	out := ProductSearchResult{Result: []ProductSearchHit{}}
	found := strings.TrimSpace(p.Agent) == ""
	for _, proj := range projs {
		r, err := s.Search(ctx, SearchParams{ProjectKey: proj.HumanKey, Query: p.Query, Limit: limit, Agent: p.Agent})
		if errors.Is(err, ErrAgentNotFound) {
			continue
		}
		if err != nil {
			return ProductSearchResult{}, err
		}
		found = true
		if out.Diagnostics == nil {
			out.Diagnostics = r.Diagnostics
		}
		for i, h := range r.Result {
			all = append(all, ranked{ProductSearchHit{ID: h.ID, Subject: h.Subject, Importance: h.Importance, AckRequired: h.AckRequired,
				ProjectID: proj.ID, CreatedTS: h.CreatedTS, ThreadID: h.ThreadID, From: h.From}, i})
		}
	}
	if !found {
		return ProductSearchResult{}, newError("NOT_FOUND", ErrAgentNotFound, "Agent '%s' not found in any project linked to product '%s'.", strings.TrimSpace(p.Agent), p.ProductKey)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].rank != all[j].rank {
			return all[i].rank < all[j].rank
		}
		return all[i].hit.ID > all[j].hit.ID
	})
	for _, r := range all {
		if len(out.Result) == limit {
			break
		}
		out.Result = append(out.Result, r.hit)
	}
	return out, nil
}

// SummarizeThreadProduct is SummarizeThread over the product's linked
// projects: a thread id gathers the messages of that thread in each of them,
// oldest first.
func (s *Service) SummarizeThreadProduct(ctx context.Context, productKey, threadID string, includeExamples bool) (any, error) {
	return s.summarizeThreads(ctx, threadID, includeExamples, func(tx Tx) ([]int64, error) {
		prod, err := s.product(ctx, tx, productKey)
		if err != nil {
			return nil, err
		}
		projs, err := tx.ProductProjects(ctx, prod.ID)
		ids := make([]int64, len(projs))
		for i, p := range projs {
			ids[i] = p.ID
		}
		return ids, err
	})
}
