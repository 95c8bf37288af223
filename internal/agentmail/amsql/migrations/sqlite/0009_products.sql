-- Products (products.go): a product key links projects, so an agent's inbox
-- and searches can span the product's projects (fetch_inbox_product,
-- search_messages_product).
CREATE TABLE am_products (
    id          INTEGER PRIMARY KEY,
    product_uid TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    created_us  INTEGER NOT NULL
);
CREATE TABLE am_product_projects (
    product_id INTEGER NOT NULL REFERENCES am_products(id),
    project_id INTEGER NOT NULL REFERENCES am_projects(id),
    created_us INTEGER NOT NULL,
    PRIMARY KEY (product_id, project_id)
) WITHOUT ROWID;
CREATE INDEX am_product_projects_project ON am_product_projects(project_id);
