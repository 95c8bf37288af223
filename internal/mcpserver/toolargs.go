package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The arguments of every tool, of every set, are checked here, not by
// go-sdk (tools are registered with the raw AddTool, which does not
// validate), so that a missing or mistyped argument gets the words of the
// contract its tool set implements instead of the schema validator's
// ("validating root: required: missing properties: [\"role\"]"). The
// advertised input schemas stay what they are, required properties
// included: the arguments are required, only the refusal is worded by the
// contract. One path for every set: the input type's schema (inferred,
// bounded by its fields' tags, edited by the row's edits) is generated into
// toolschemas.json and checked by argDecoder in the set's style.

// argStyle is how a tool set words argument errors.
type argStyle int

const (
	// argsAgentMail: "body_md is required: send_message needs project_key,
	// sender_name, to, subject and body_md"; "limit must be an integer (got string)".
	argsAgentMail argStyle = iota
	// argsChannels: the channels contract's "role is required"; wrong types
	// "role must be a string (got number)".
	argsChannels
	// argsMailbox: as the original four-tool server, which decodes the
	// arguments itself: a missing argument is empty and the tool answers
	// its own refusal ("no message provided", "recipient not found",
	// "Invalid status: . Valid: …"), extra keys are accepted, and a wrong
	// type or arguments that are not an object are "failed to parse
	// arguments: …" (a tool error, as in every set).
	argsMailbox
	// argsEmail: the email set's. A missing required argument is "Error:
	// thread_id is required: reply_email needs thread_id and body";
	// arguments that are not an object "Error: the arguments of … are not
	// a JSON object"; defaults are applied, and anything else the schema
	// refuses keeps the validator's words. Keys the tool does not take are
	// accepted, as the contract's schemas allow, ignored, and named in the
	// answer (decoded.ignored).
	argsEmail
)

func (s argStyle) String() string {
	switch s {
	case argsChannels:
		return "channels"
	case argsMailbox:
		return "mailbox"
	case argsEmail:
		return "email"
	}
	return "agentmail"
}

// argError is an argument refusal, worded for the agent.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

// errMalformedArgs marks arguments that are not a JSON object at all.
var errMalformedArgs = errors.New("arguments are not a JSON object")

// argDecoder validates and decodes the arguments of a tool registered with
// the raw AddTool (the agent-mail, channels and mailbox sets, whose answers
// are shaped by hand). Its schema is inferred and resolved on the tool's
// first call, not at registration: a server starts without reflecting or
// resolving any schema (the advertised ones come from toolschemas.json, see
// toolSchema).
type argDecoder[In any] struct {
	once     sync.Once
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	tool     string
	style    argStyle
	edits    []func(*jsonschema.Schema) // what struct tags cannot say (the row's)
	// typesOnly: the schema says no more than check checks, so arguments
	// that name only its properties skip the validator (toolargs_fast.go).
	typesOnly bool
}

func newArgDecoder[In any](spec *mcp.Tool, style argStyle, edits ...func(*jsonschema.Schema)) *argDecoder[In] {
	d := &argDecoder[In]{tool: spec.Name, style: style, edits: edits}
	key := "in/" + style.String() + "/" + spec.Name
	if raw, ok := toolSchema(key); ok {
		spec.InputSchema = raw
		return d
	}
	d.init()
	advertised := inputSchemaFor[In](style, edits)
	applyBounds(reflect.TypeFor[In](), advertised)
	spec.InputSchema = advertised
	schemaBuilt(key, advertised)
	return d
}

// applyBounds advertises, in the input schema s of type t, the limits the
// core enforces: a field's maxItems:"N" tag (a list's length) and
// maxLength:"N" tag (a string's length, or each item's of a list). Only
// the advertised schema has them: arguments over a limit reach the core,
// which refuses them with its own words (the limit and what to do), as
// the contracts' tests pin. JSON Schema counts characters where the core
// counts bytes, so the advertised maxLength is a ceiling a client can check
// before calling, not the whole rule. A limit goes on a field only where
// the core checks the argument as given (not trimmed or decoded first),
// so that no argument the server accepts breaks the schema.
func applyBounds(t reflect.Type, s *jsonschema.Schema) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			applyBounds(f.Type, s)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		maxItems, maxLength := f.Tag.Get("maxItems"), f.Tag.Get("maxLength")
		p := s.Properties[name]
		if p == nil || (maxItems == "" && maxLength == "") {
			continue
		}
		bounded := *p // the flexible types' schemas are shared: never edit one in place
		if maxItems != "" {
			bounded.MaxItems = ptr(mustAtoi(t, f, maxItems))
		}
		if maxLength != "" {
			n := ptr(mustAtoi(t, f, maxLength))
			if f.Type.Kind() == reflect.Slice {
				items := *p.Items
				items.MaxLength = n
				bounded.Items = &items
			} else {
				bounded.MaxLength = n
			}
		}
		s.Properties[name] = &bounded
	}
}

func mustAtoi(t reflect.Type, f reflect.StructField, v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		panic(fmt.Sprintf("%s.%s: bound %q is not a length", t, f.Name, v)) // a programming error, caught by every test
	}
	return n
}

// init infers and resolves the schema (once).
func (d *argDecoder[In]) init() {
	d.once.Do(func() {
		d.schema = inputSchemaFor[In](d.style, d.edits)
		var opts *jsonschema.ResolveOptions
		if d.style == argsEmail {
			opts = &jsonschema.ResolveOptions{ValidateDefaults: true} // max_results' default 5
		}
		resolved, err := d.schema.Resolve(opts)
		if err != nil {
			panic(fmt.Sprintf("input schema of %s: %v", d.tool, err)) // a programming error, caught by every test
		}
		d.resolved = resolved
		d.typesOnly = checkedByTypes(d.schema)
	})
}

// inputSchemaFor is the input schema of a tool taking In in style.
func inputSchemaFor[In any](style argStyle, edits []func(*jsonschema.Schema)) *jsonschema.Schema {
	schema := amInputSchema[In]()
	if style == argsMailbox || style == argsEmail {
		// The original four-tool server's schemas, and the email
		// contract's, accept extra keys.
		schema.AdditionalProperties = nil
	}
	for _, edit := range edits {
		edit(schema)
	}
	return schema
}

// decode treats missing arguments as {} and a null argument as an absent
// one, checks them (required, then types, then the whole schema), then
// decodes them into In.
func (d *argDecoder[In]) decode(raw json.RawMessage) (In, error) {
	in, _, err := d.decodeKeys(raw)
	return in, err
}

// decodeKeys is decode, also naming the keys it ignored (argsEmail's only:
// the other styles refuse them or, argsMailbox, accept them unsaid).
func (d *argDecoder[In]) decodeKeys(raw json.RawMessage) (In, []string, error) {
	d.init()
	var in In
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if d.style == argsEmail {
		return d.decodeEmail(raw)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		if d.style == argsMailbox {
			return in, nil, fmt.Errorf("failed to parse arguments: %w: %v", errMalformedArgs, err)
		}
		return in, nil, fmt.Errorf("%w: %v", errMalformedArgs, err)
	}
	for k, v := range args {
		if v == nil {
			delete(args, k)
		}
	}
	if err := d.check(args); err != nil {
		return in, nil, err
	}
	if d.style != argsMailbox && !(d.typesOnly && allKnown(d.schema, args)) {
		// Whatever the checks above do not word (unknown keys, nested
		// shapes) keeps the validator's text.
		if err := d.resolved.Validate(args); err != nil {
			return in, nil, &argError{`validating "arguments": ` + err.Error()}
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var te *json.UnmarshalTypeError
		msg := err.Error()
		if errors.As(err, &te) && te.Field != "" {
			msg = fmt.Sprintf("%s must be %s (got %s)", te.Field, jsonKindOf(te.Type.Kind().String()), te.Value)
		} else if prop := d.failedProp(raw); prop != "" {
			msg = prop + ": " + msg
		}
		if d.style == argsMailbox {
			msg = "failed to parse arguments: " + msg
		}
		return in, nil, &argError{msg}
	}
	return in, nil, nil
}

// decodeEmail is decode in argsEmail's words (see argsEmail). Keys the
// schema does not have are dropped before validation and returned.
func (d *argDecoder[In]) decodeEmail(raw json.RawMessage) (In, []string, error) {
	var in In
	args := map[string]any{}
	if err := json.Unmarshal(raw, &args); err != nil {
		return in, nil, &argError{fmt.Sprintf("Error: the arguments of %s are not a JSON object: %v", d.tool, err)}
	}
	var ignored []string
	for k := range args {
		if _, ok := d.schema.Properties[k]; !ok {
			ignored = append(ignored, k)
			delete(args, k)
		}
	}
	slices.Sort(ignored)
	for _, name := range d.schema.Required {
		if _, ok := args[name]; !ok {
			return in, ignored, &argError{fmt.Sprintf("Error: %s is required: %s needs %s", name, d.tool, andList(d.schema.Required))}
		}
	}
	var v any = args // as go-sdk's typed AddTool checks them
	if err := d.resolved.ApplyDefaults(&v); err != nil {
		return in, ignored, &argError{`validating "arguments": applying schema defaults: ` + err.Error()}
	}
	if err := d.resolved.Validate(&v); err != nil {
		return in, ignored, &argError{`validating "arguments": ` + err.Error()}
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		return in, ignored, &argError{err.Error()}
	}
	return in, ignored, nil
}

// check words the first missing required argument or mistyped argument.
func (d *argDecoder[In]) check(args map[string]any) error {
	if d.style != argsMailbox {
		for _, name := range d.schema.Required {
			if _, ok := args[name]; ok {
				continue
			}
			if d.style == argsChannels {
				return &argError{name + " is required"}
			}
			return &argError{fmt.Sprintf("%s is required: %s needs %s", name, d.tool, andList(d.schema.Required))}
		}
	}
	names := d.schema.PropertyOrder
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(d.schema.Properties))
	}
	for _, name := range names {
		v, ok := args[name]
		if !ok {
			continue
		}
		if want := wrongType(d.schema.Properties[name], v); want != "" {
			msg := fmt.Sprintf("%s must be %s (got %s)", name, want, jsonKind(v))
			if d.style == argsMailbox {
				msg = "failed to parse arguments: " + msg
			}
			return &argError{msg}
		}
	}
	return nil
}

// failedProp finds which argument fails to decode on its own, so a custom
// decoder's error (e.g. a message id that is not a number) names it.
func (d *argDecoder[In]) failedProp(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	var probe In
	for _, name := range d.schema.PropertyOrder {
		b, ok := fields[name]
		if !ok {
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{name: b})
		if json.Unmarshal(one, &probe) != nil {
			return name
		}
	}
	return ""
}

// wrongType returns what an argument of schema p must be, when v is not
// that ("" when it is).
func wrongType(p *jsonschema.Schema, v any) string {
	if p == nil {
		return ""
	}
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if len(types) == 0 {
		return ""
	}
	for _, t := range types {
		if kindMatches(t, v) {
			if arr, ok := v.([]any); ok && p.Items != nil {
				for _, e := range arr {
					if w := wrongType(p.Items, e); w != "" {
						return "a list of " + plural(w)
					}
				}
			}
			return ""
		}
	}
	var wants []string
	for _, t := range types {
		switch t {
		case "null": // a null argument is an absent one (see decode)
		case "array":
			if p.Items != nil && p.Items.Type != "" {
				wants = append(wants, "a list of "+plural(article(p.Items.Type)))
			} else {
				wants = append(wants, "a list")
			}
		default:
			wants = append(wants, article(t))
		}
	}
	return strings.Join(wants, " or ")
}

func kindMatches(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

// article names a JSON Schema type for a sentence.
func article(t string) string {
	switch t {
	case "integer":
		return "an integer"
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "boolean":
		return "true or false"
	}
	return "a " + t
}

// plural turns "a string" into "strings", "an integer" into "integers".
func plural(s string) string {
	switch s {
	case "true or false":
		return "booleans"
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "an "), "a ")
	return s + "s"
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return "null"
}

// jsonKindOf names a Go kind as the JSON type it decodes from.
func jsonKindOf(kind string) string {
	switch {
	case kind == "string":
		return "a string"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "bool":
		return "true or false"
	case kind == "slice":
		return "a list"
	}
	return "an object"
}

// andList is "a, b and c".
func andList(names []string) string {
	switch len(names) {
	case 0:
		return "no arguments"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
