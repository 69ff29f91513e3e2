package fakegithub

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// The npm package GitHub's public GraphQL schema comes from (MIT; see
// spec/NOTICE).
const (
	graphqlPackage = "@octokit/graphql-schema@15.26.1"
	graphqlFile    = "package/schema.graphql"
)

// graphqlKeep is what the trimmed schema keeps of each object and
// interface type: exactly the fields the fake resolves (see graphql.go and
// TestGraphQLResolvesSchema). Input objects, enums and scalars that a kept
// field or argument names are kept whole; interfaces and union members not
// kept are dropped from "implements" and unions.
var graphqlKeep = map[string][]string{
	"Query":    {"node", "repository"},
	"Mutation": {"resolveReviewThread", "unresolveReviewThread"},
	"Node":     {"id"},
	"Actor":    {"login"},
	"User":     {"id", "login"},
	"Bot":      {"id", "login"},
	"Repository": {
		"id", "name", "nameWithOwner", "pullRequest",
	},
	"PullRequest":                       {"id", "number", "headRefOid", "baseRefOid", "reviewThreads"},
	"PullRequestReviewThreadConnection": {"nodes", "edges", "pageInfo", "totalCount"},
	"PullRequestReviewThreadEdge":       {"cursor", "node"},
	"PullRequestReviewThread": {
		"id", "isResolved", "isOutdated", "isCollapsed", "path", "line", "startLine", "originalLine",
		"originalStartLine", "diffSide", "startDiffSide", "subjectType", "viewerCanResolve",
		"viewerCanUnresolve", "viewerCanReply", "resolvedBy", "comments",
	},
	"PullRequestReviewCommentConnection": {"nodes", "edges", "pageInfo", "totalCount"},
	"PullRequestReviewCommentEdge":       {"cursor", "node"},
	"PullRequestReviewComment": {
		"id", "fullDatabaseId", "body", "path", "author", "createdAt", "url", "replyTo", "outdated", "diffHunk", "reactions",
	},
	"ReactionConnection":           {"nodes", "edges", "pageInfo", "totalCount"},
	"ReactionEdge":                 {"cursor", "node"},
	"Reaction":                     {"id", "content", "user", "createdAt"},
	"PageInfo":                     {"endCursor", "hasNextPage", "hasPreviousPage", "startCursor"},
	"ResolveReviewThreadPayload":   {"clientMutationId", "thread"},
	"UnresolveReviewThreadPayload": {"clientMutationId", "thread"},
}

// trimGraphQL cuts GitHub's schema (SDL) to graphqlKeep and what it
// references. Descriptions stay; directives other than @deprecated are
// dropped with their definitions (they describe GitHub's previews and
// capabilities, not the shape of queries). It fails when a kept field's
// type is an object or interface that graphqlKeep does not list, so that
// the cut can never leave a dangling type.
func trimGraphQL(full []byte, keep map[string][]string) ([]byte, error) {
	doc, err := parser.ParseSchema(&ast.Source{Name: "schema.graphql", Input: string(full)})
	if err != nil {
		return nil, err
	}
	defs := map[string]*ast.Definition{}
	for _, d := range doc.Definitions {
		defs[d.Name] = d
	}
	kept := map[string]*ast.Definition{}
	var todo []string
	need := func(name string) { todo = append(todo, name) }
	for name := range keep {
		need(name)
	}
	stripDirectives := func(l ast.DirectiveList) ast.DirectiveList {
		var out ast.DirectiveList
		for _, d := range l {
			if d.Name == "deprecated" {
				out = append(out, d)
			}
		}
		return out
	}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if kept[name] != nil || isBuiltinScalar(name) {
			continue
		}
		d, ok := defs[name]
		if !ok {
			return nil, fmt.Errorf("type %s is not in the schema", name)
		}
		c := *d
		c.Directives = stripDirectives(d.Directives)
		switch d.Kind {
		case ast.Object, ast.Interface:
			fields, ok := keep[name]
			if !ok {
				return nil, fmt.Errorf("a kept field has type %s, which graphqlKeep does not list", name)
			}
			c.Fields = nil
			for _, fname := range fields {
				f := d.Fields.ForName(fname)
				if f == nil {
					return nil, fmt.Errorf("%s.%s is not in the schema", name, fname)
				}
				fc := *f
				fc.Directives = stripDirectives(f.Directives)
				fc.Arguments = nil
				for _, a := range f.Arguments {
					ac := *a
					ac.Directives = stripDirectives(a.Directives)
					fc.Arguments = append(fc.Arguments, &ac)
					need(a.Type.Name())
				}
				c.Fields = append(c.Fields, &fc)
				need(f.Type.Name())
			}
			// An interface stays when it is kept and the type keeps all
			// of the interface's kept fields.
			c.Interfaces = slices.DeleteFunc(slices.Clone(d.Interfaces), func(i string) bool {
				ifields, ok := keep[i]
				return !ok || slices.ContainsFunc(ifields, func(f string) bool { return !slices.Contains(fields, f) })
			})
		case ast.InputObject:
			c.Fields = nil
			for _, f := range d.Fields {
				fc := *f
				fc.Directives = stripDirectives(f.Directives)
				c.Fields = append(c.Fields, &fc)
				need(f.Type.Name())
			}
		case ast.Enum:
			c.EnumValues = nil
			for _, v := range d.EnumValues {
				vc := *v
				vc.Directives = stripDirectives(v.Directives)
				c.EnumValues = append(c.EnumValues, &vc)
			}
		case ast.Union:
			c.Types = slices.DeleteFunc(slices.Clone(d.Types), func(t string) bool { _, ok := keep[t]; return !ok })
			c.TypePositions = nil
		}
		kept[name] = &c
	}
	out := &ast.SchemaDocument{}
	for _, name := range slices.Sorted(maps.Keys(kept)) {
		out.Definitions = append(out.Definitions, kept[name])
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# GitHub's public GraphQL schema, cut from %s %s to what\n# fakegithub serves. Regenerate: go test ./internal/fakegithub -run TestRegenerate -regen\n\n",
		graphqlPackage, strings.TrimPrefix(graphqlFile, "package/"))
	formatter.NewFormatter(&buf, formatter.WithIndent("  ")).FormatSchemaDocument(out)
	if _, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: buf.String()}); err != nil {
		return nil, fmt.Errorf("the trimmed schema does not load: %w", err)
	}
	return buf.Bytes(), nil
}

func isBuiltinScalar(name string) bool {
	switch name {
	case "String", "Int", "Float", "Boolean", "ID":
		return true
	}
	return false
}
