package mcpserver

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// The schema validator (jsonschema's Resolved.Validate) was the dearest
// part of reading a call's arguments: 6–7% of the server's CPU on a
// send_message, where check has already done everything it would. So
// argDecoder runs it only where it can say something check cannot: a
// schema with more than types, required properties and lists of typed
// items (an enum, a bound, a nested object, a pattern, …), or arguments
// with a key the schema does not name (the validator words that refusal).

// checkedByTypes reports whether validating arguments against the object
// schema s says nothing beyond check's required and type checks when every
// argument is one of its properties: s names its properties' types (and
// their lists' item types) and nothing else that validation reads.
func checkedByTypes(s *jsonschema.Schema) bool {
	if s == nil || s.Type != "object" {
		return false
	}
	rest := *s
	rest.Type, rest.Properties, rest.Required, rest.PropertyOrder = "", nil, nil, nil
	if ap := rest.AdditionalProperties; ap != nil && !isFalseSchema(ap) {
		return false
	}
	rest.AdditionalProperties = nil
	if !onlyAnnotations(rest) {
		return false
	}
	for _, p := range s.Properties {
		if !typedOnly(p, true) {
			return false
		}
	}
	return true
}

// typedOnly reports whether p says only what type a value has (and, when
// items is allowed, what type a list's items have).
func typedOnly(p *jsonschema.Schema, items bool) bool {
	if p == nil || (p.Type == "" && len(p.Types) == 0) {
		return false
	}
	rest := *p
	rest.Type, rest.Types = "", nil
	if rest.Items != nil {
		if !items || !typedOnly(rest.Items, false) {
			return false
		}
		rest.Items = nil
	}
	return onlyAnnotations(rest)
}

// onlyAnnotations reports whether s has nothing left but the keywords
// validation ignores.
func onlyAnnotations(s jsonschema.Schema) bool {
	s.Title, s.Description, s.Comment, s.Default, s.Examples = "", "", "", nil, nil
	s.Deprecated, s.ReadOnly, s.WriteOnly = false, false, false
	return reflect.ValueOf(s).IsZero()
}

// isFalseSchema reports whether s is the schema nothing matches ({"not": {}}),
// as inferred schemas forbid additional properties.
func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

// allKnown reports whether every argument is a property of s.
func allKnown(s *jsonschema.Schema, args map[string]any) bool {
	for k := range args {
		if _, ok := s.Properties[k]; !ok {
			return false
		}
	}
	return true
}
