package amsql

import (
	"context"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

const productCols = `id, product_uid, name, created_us`

func scanProduct(row Row) (agentmail.Product, error) {
	var p agentmail.Product
	if err := row.Scan(&p.ID, &p.UID, &p.Name, Time(&p.CreatedAt)); err != nil {
		return agentmail.Product{}, NotFound(err)
	}
	return p, nil
}

var (
	// A key is a uid first, a name only when no uid matches (ORDER BY puts
	// the uid's row first).
	productByKey = define(`SELECT ` + productCols + ` FROM am_products WHERE product_uid = ?1 OR name = ?1
		ORDER BY CASE WHEN product_uid = ?1 THEN 0 ELSE 1 END, id LIMIT 1`)
	insertProduct = define(`INSERT INTO am_products (product_uid, name, created_us) VALUES (?, ?, ?) RETURNING id`)
	linkProduct   = define(`INSERT INTO am_product_projects (product_id, project_id, created_us) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`)
	productProjects = define(`SELECT p.id, p.slug, p.human_key, p.created_us FROM am_product_projects l
		JOIN am_projects p ON p.id = l.project_id WHERE l.product_id = ? ORDER BY p.id`)
)

// ProductByKey implements agentmail.ProductTx.
func (t *Tx) ProductByKey(ctx context.Context, key string) (agentmail.Product, error) {
	return scanProduct(t.queryRow(ctx, productByKey, key))
}

// InsertProduct implements agentmail.ProductTx.
func (t *Tx) InsertProduct(ctx context.Context, p *agentmail.Product) error {
	return t.insertID(ctx, &p.ID, insertProduct, p.UID, p.Name, US(p.CreatedAt))
}

// LinkProduct implements agentmail.ProductTx.
func (t *Tx) LinkProduct(ctx context.Context, productID, projectID int64, at time.Time) error {
	_, err := t.exec(ctx, linkProduct, productID, projectID, US(at))
	return err
}

// ProductProjects implements agentmail.ProductTx.
func (t *Tx) ProductProjects(ctx context.Context, productID int64) ([]agentmail.Project, error) {
	return all(ctx, t, productProjects, scanProject, productID)
}
