package mcpserver

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk's Server.AddTool checks the schemas it is given by decoding each
// again: the input schema twice (that it is an object; its properties, for
// x-mcp-header annotations) and the output schema once, each a marshal and
// an unmarshal. With the schemas already JSON (toolschemas.json, which
// TestToolSchemasGenerated holds to what inference gives, and whose every
// tool the generating run registers with its inferred schema, go-sdk's
// checks included) that was 9% of a `serve --sandbox` start, for every
// process. Besides those checks, go-sdk reads a registered tool's schemas
// only to answer tools/list and, at each HTTP tools/call, to look for
// header annotations again. So a tool whose schemas are generated JSON is
// registered with a stand-in, an object schema without properties and no
// output schema, and the tools/list answers carry its own schemas
// (advertised.listTools): the same bytes on the wire. A schema that has a
// header annotation is registered as it is.

// advertised holds, per tool name, the schemas a server's tools/list
// answers with where go-sdk holds a stand-in. It is filled while New
// registers the tools and only read after.
type advertised struct {
	schemas map[string]toolSchemaPair
}

type toolSchemaPair struct {
	in, out any
}

// standInSchema is what go-sdk is given for an input schema: it passes
// AddTool's check (an object, by its Type) without being decoded, and has no
// header annotation. go-sdk looks for annotations by encoding the schema and
// decoding it again, each decode with a new 32 KiB buffer, at AddTool (~70
// tools a server, and each test builds its servers) and at each HTTP
// tools/call; a schema it cannot encode has none. So the stand-in's encoding
// fails on purpose (an Extra value JSON cannot hold, a func) and go-sdk's
// look stops at the encoding. Nothing sends it: tools/list answers carry each
// tool's own schemas (listTools; TestStandInSchemaNotEncodable).
var standInSchema = &jsonschema.Schema{Type: "object", Extra: map[string]any{"x-mailgate-stand-in": func() {}}}

func newAdvertised() *advertised { return &advertised{schemas: map[string]toolSchemaPair{}} }

// listTools is a receiving middleware giving the tools of a tools/list
// answer their own schemas. The answer's list is go-sdk's, new for each
// request; its tools are go-sdk's registered ones, so each is copied.
func (a *advertised) listTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || r == nil {
			return res, err
		}
		for i, t := range r.Tools {
			if sc, ok := a.schemas[t.Name]; ok && t != nil {
				own := *t
				own.InputSchema, own.OutputSchema = sc.in, sc.out
				r.Tools[i] = &own
			}
		}
		return res, err
	}
}
