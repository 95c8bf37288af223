package mcpserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestTypesOnlySchemasNeedNoValidator: for every tool whose arguments skip
// the schema validator (checkedByTypes), arguments that pass check and
// name only the schema's properties also pass the validator, over
// generated arguments of every kind in every property; and the validator
// still runs where the schema says more (an enum, a bound, a nested
// object) or an argument is not one of its properties.
func TestTypesOnlySchemasNeedNoValidator(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 1))
	fast := 0
	for _, e := range inventory {
		style := toolSets[e.Set].args
		if style == argsMailbox || style == argsEmail {
			continue // argsMailbox never validates; argsEmail has its own path
		}
		s, err := jsonschema.ForType(e.Handler.in, &jsonschema.ForOptions{TypeSchemas: amFlexSchemas})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if !checkedByTypes(s) {
			continue
		}
		fast++
		resolved, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		d := &argDecoder[struct{}]{tool: e.Name, style: style, schema: s}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range s.Properties {
				if !yield(n) {
					return
				}
			}
		})
		passed := 0
		for i := range 400 {
			args := map[string]any{}
			for _, n := range names {
				if i%2 == 0 && rng.IntN(3) > 0 { // every other round: values of any kind
					args[n] = anyJSONValue(rng, 2)
				}
			}
			for _, n := range s.Required { // mostly present, so check passes often
				if _, ok := args[n]; !ok && rng.IntN(4) > 0 {
					args[n] = valueOfSchema(rng, s.Properties[n])
				}
			}
			for _, n := range names {
				if rng.IntN(2) == 0 {
					args[n] = valueOfSchema(rng, s.Properties[n])
				}
			}
			if d.check(args) != nil || !allKnown(s, args) {
				continue
			}
			passed++
			if err := resolved.Validate(args); err != nil {
				b, _ := json.Marshal(args)
				t.Fatalf("%s: %s passes check but the validator says %v", e.Name, b, err)
			}
		}
		if passed == 0 {
			t.Errorf("%s: no generated arguments passed check; the comparison tested nothing", e.Name)
		}
	}
	if fast == 0 {
		t.Fatal("no tool skips the validator")
	}
	t.Logf("%d tools skip the validator for arguments naming only their properties", fast)
}

// TestValidatorKeptWhereSchemasSayMore: checkedByTypes refuses every schema
// with something check does not check.
func TestValidatorKeptWhereSchemasSayMore(t *testing.T) {
	t.Parallel()
	n := 3
	base := func() *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: []string{"a"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"a": {Type: "string", Description: "d"},
				"b": {Types: []string{"array", "string"}, Items: &jsonschema.Schema{Type: "string"}},
			}}
	}
	if !checkedByTypes(base()) {
		t.Fatal("a schema of types only is not recognised")
	}
	for name, edit := range map[string]func(*jsonschema.Schema){
		"enum":       func(s *jsonschema.Schema) { s.Properties["a"].Enum = []any{"x"} },
		"maxLength":  func(s *jsonschema.Schema) { s.Properties["a"].MaxLength = &n },
		"maxItems":   func(s *jsonschema.Schema) { s.Properties["b"].MaxItems = &n },
		"item bound": func(s *jsonschema.Schema) { s.Properties["b"].Items.MaxLength = &n },
		"nested object": func(s *jsonschema.Schema) {
			s.Properties["a"] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": {Type: "string"}}}
		},
		"untyped":       func(s *jsonschema.Schema) { s.Properties["a"] = &jsonschema.Schema{} },
		"pattern":       func(s *jsonschema.Schema) { s.Properties["a"].Pattern = "^x" },
		"minProperties": func(s *jsonschema.Schema) { s.MinProperties = &n },
		"additional ok": func(s *jsonschema.Schema) { s.AdditionalProperties = &jsonschema.Schema{Type: "string"} },
		"anyOf":         func(s *jsonschema.Schema) { s.AnyOf = []*jsonschema.Schema{{Required: []string{"b"}}} },
		"list of lists": func(s *jsonschema.Schema) {
			s.Properties["b"].Items = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}
		},
		"not an object":  func(s *jsonschema.Schema) { s.Type = "array" },
		"dependentReq":   func(s *jsonschema.Schema) { s.DependentRequired = map[string][]string{"a": {"b"}} },
		"const":          func(s *jsonschema.Schema) { var c any = "x"; s.Properties["a"].Const = &c },
		"format":         func(s *jsonschema.Schema) { s.Properties["a"].Format = "email" },
		"false property": func(s *jsonschema.Schema) { s.Properties["a"].Not = &jsonschema.Schema{} },
	} {
		s := base()
		edit(s)
		if checkedByTypes(s) {
			t.Errorf("%s: schema taken as types only", name)
		}
	}
}

// valueOfSchema is a value of one of p's types (items of its item type),
// sometimes of the wrong kind.
func valueOfSchema(rng *rand.Rand, p *jsonschema.Schema) any {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	switch types[rng.IntN(len(types))] {
	case "string":
		return fmt.Sprint("s", rng.IntN(100))
	case "integer":
		if rng.IntN(5) == 0 {
			return 1.5
		}
		return float64(rng.IntN(100))
	case "number":
		return rng.Float64()
	case "boolean":
		return rng.IntN(2) == 0
	case "array":
		var l []any
		for range rng.IntN(3) {
			if p.Items != nil && rng.IntN(6) > 0 {
				l = append(l, valueOfSchema(rng, p.Items))
			} else {
				l = append(l, anyJSONValue(rng, 0))
			}
		}
		return l
	}
	return anyJSONValue(rng, 1)
}

// anyJSONValue is a JSON value of any kind, as json.Unmarshal into any
// gives it.
func anyJSONValue(rng *rand.Rand, depth int) any {
	k := rng.IntN(7)
	if depth == 0 && k >= 5 {
		k = rng.IntN(5)
	}
	switch k {
	case 0:
		return fmt.Sprint("v", rng.IntN(10))
	case 1:
		return float64(rng.IntN(10))
	case 2:
		return 2.5
	case 3:
		return rng.IntN(2) == 0
	case 4:
		return "" // an empty string is still a string
	case 5:
		return []any{anyJSONValue(rng, depth-1), anyJSONValue(rng, depth-1)}
	}
	return map[string]any{"k": anyJSONValue(rng, depth-1)}
}
