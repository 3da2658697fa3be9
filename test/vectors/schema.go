package main

// Reflection over the Go API types, written out as a table of JSON field shapes that the
// TypeScript typed round trip (api/src/revision/typedJson.ts) walks. Generating the table keeps
// it complete (every field of PodSpec, including the rarely used ones) and exact (json names,
// omitempty, pointer or not), which a hand-written rendition would not stay for long.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Types with their own MarshalJSON/UnmarshalJSON get a name that the TS side implements by hand.
var customTypes = map[string]string{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   "quantity",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intOrString",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       "time",
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   "raw",
}

var packagePrefixes = map[string]string{
	"k8s.io/api/core/v1":                             "core",
	"k8s.io/apimachinery/pkg/apis/meta/v1":           "meta",
	"github.com/openkruise/kruise-api/apps/v1alpha1": "kruise",
	"github.com/openkruise/kruise-api/apps/pub":      "kruisepub",
}

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

type schemaField struct {
	name      string
	typ       string
	omitEmpty bool
}

type schema struct {
	structs map[string][]schemaField
}

func newSchema() *schema { return &schema{structs: map[string][]schemaField{}} }

// typeExpr names t in the small grammar the TS side parses: primitives, custom names,
// "*T", "[]T", "map[]T" (keys are always strings here) and struct names "pkg.Name".
func (s *schema) typeExpr(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		return "*" + s.typeExpr(t.Elem())
	}
	if name, ok := customTypes[t.PkgPath()+"."+t.Name()]; ok {
		return name
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		panic(fmt.Sprintf("type %s has custom JSON methods the TS side does not model", t))
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int32:
		return "int32"
	case reflect.Int64:
		return "int64"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			panic(fmt.Sprintf("[]byte (%s) is not modelled", t))
		}
		return "[]" + s.typeExpr(t.Elem())
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("map key %s is not a string", t.Key()))
		}
		return "map[]" + s.typeExpr(t.Elem())
	case reflect.Struct:
		prefix, ok := packagePrefixes[t.PkgPath()]
		if !ok {
			panic(fmt.Sprintf("struct %s.%s is in an unmapped package", t.PkgPath(), t.Name()))
		}
		name := prefix + "." + t.Name()
		if _, seen := s.structs[name]; !seen {
			s.structs[name] = nil // reserve first: the type graph is recursive (JSONSchemaProps-like cycles)
			s.structs[name] = s.fieldsOf(t)
		}
		return name
	default:
		panic(fmt.Sprintf("kind %s (%s) is not modelled", t.Kind(), t))
	}
}

// fieldsOf lists a struct's JSON fields in encoding order, promoting embedded structs the way
// encoding/json does (the k8s types have no name conflicts, so dominance rules never apply).
func (s *schema) fieldsOf(t reflect.Type) []schemaField {
	var fields []schemaField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",omitzero,") || strings.Contains(","+opts+",", ",string,") {
			panic(fmt.Sprintf("%s.%s uses a tag option the TS side does not model: %q", t, f.Name, tag))
		}
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct {
				panic(fmt.Sprintf("embedded non-struct %s in %s", f.Type, t))
			}
			fields = append(fields, s.fieldsOf(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, schemaField{
			name:      name,
			typ:       s.typeExpr(f.Type),
			omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
		})
	}
	return fields
}

// typescript renders the table as a TS module laid out the way Prettier prints it.
func (s *schema) typescript(header string) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("import type { GoStructTable } from './goStructTable.js';\n\n")
	b.WriteString("export const goStructs: GoStructTable = {\n")
	names := make([]string, 0, len(s.structs))
	for name := range s.structs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fields := s.structs[name]
		if len(fields) == 0 {
			fmt.Fprintf(&b, "  '%s': [],\n", name)
			continue
		}
		if len(fields) == 1 {
			// Prettier keeps a one-element array of a tuple on one line when it fits.
			line := fmt.Sprintf("  '%s': [%s],", name, tupleTS(fields[0]))
			if len(line) <= 120 {
				b.WriteString(line + "\n")
				continue
			}
		}
		fmt.Fprintf(&b, "  '%s': [\n", name)
		for _, f := range fields {
			fmt.Fprintf(&b, "    %s,\n", tupleTS(f))
		}
		b.WriteString("  ],\n")
	}
	b.WriteString("};\n")
	return b.String()
}

func tupleTS(f schemaField) string {
	if f.omitEmpty {
		return fmt.Sprintf("['%s', '%s', 'omitempty']", f.name, f.typ)
	}
	return fmt.Sprintf("['%s', '%s']", f.name, f.typ)
}
