package mcpserver

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	sjson "github.com/segmentio/encoding/json"
)

// The agent-mail, channels and mailbox tools advertise the JSON schemas of
// their Go argument and answer types. Inferring them (jsonschema.For) and
// handing them to go-sdk (which marshals each *jsonschema.Schema again to
// look for header annotations) took most of a server's start with the
// agent-mail set: ~12 ms for its 24 tools. So the schemas are generated once
// into toolschemas.json, embedded, and advertised from there as raw JSON;
// the Go types' schemas are only built, per tool, on its first call, to
// check its arguments (argDecoder). TestToolSchemasGenerated fails when the
// file differs from what inference gives today and rewrites it with
// -update.
//
// Keys: "in/<set>/<tool>" for an input schema (the set's argument style
// changes it: the mailbox set accepts extra keys), "out/<set>/<tool>" for
// an output schema (two sets may have a tool of one name: agentmail's and
// channels' send_message answer differently).

//go:embed toolschemas.json
var toolSchemasJSON []byte

// toolSchemas is toolschemas.json by key, read on the first registration.
// segmentio's decoder (go-sdk's) reads the file in 0.15 ms where
// encoding/json took 1.15 (4% of a serve --sandbox start); the values are
// the same bytes.
var toolSchemas = sync.OnceValue(func() map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := sjson.Unmarshal(toolSchemasJSON, &m); err != nil {
		panic(fmt.Sprintf("toolschemas.json: %v", err)) // embedded at build time: caught by every test
	}
	return m
})

// reflectSchemas makes the registrations infer every schema, as before
// toolschemas.json; the test that generates the file sets it.
var reflectSchemas bool

// schemaBuilt, when set, receives every schema a registration inferred
// (the generating test collects them).
var schemaBuilt = func(key string, schema any) {}

// toolSchema is the generated schema under key.
func toolSchema(key string) (json.RawMessage, bool) {
	if reflectSchemas {
		return nil, false
	}
	raw, ok := toolSchemas()[key]
	return raw, ok
}
