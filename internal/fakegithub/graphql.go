package fakegithub

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"
)

// schemaGraphQL is GitHub's public GraphQL schema (@octokit/graphql-schema
// 15.26.1, MIT; see spec/NOTICE), cut to what the fake serves.
//
//go:embed spec/schema.graphql
var schemaGraphQL string

var loadGraphQL = sync.OnceValues(func() (*ast.Schema, error) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "spec/schema.graphql", Input: schemaGraphQL})
	if err != nil {
		return nil, fmt.Errorf("fakegithub: load spec/schema.graphql: %w", err)
	}
	return s, nil
})

// GitHub's GraphQL error types (the "type" of an entry in "errors").
const (
	gqlNotFound  = "NOT_FOUND"
	gqlForbidden = "FORBIDDEN"
)

// threadState is what GitHub keeps of a review thread beyond its comments.
type threadState struct {
	resolved   bool
	resolvedBy string
}

// ResolveThread marks the thread that the review comment root starts as
// resolved by login (a person resolving it in the UI), or unresolved when
// login is "".
func (s *Server) ResolveThread(root int64, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.threads == nil {
		s.threads = map[int64]*threadState{}
	}
	s.threads[root] = &threadState{resolved: login != "", resolvedBy: login}
}

// ThreadResolved reports whether the thread that review comment root starts
// is resolved, and by whom.
func (s *Server) ThreadResolved(root int64) (resolved bool, by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.threads[root]; t != nil {
		return t.resolved, t.resolvedBy
	}
	return false, ""
}

// ThreadID is the GraphQL node id of the thread that review comment root
// starts.
func ThreadID(root int64) string { return nodeID("PRRT", root) }

func (s *Server) handleGraphQL() {
	s.mux.HandleFunc(RouteGraphQL, func(w http.ResponseWriter, r *http.Request) {
		access := s.access(r.Header.Get("Authorization"))
		if access == noAccess {
			// GitHub's GraphQL 401 has only a message and a docs link.
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": MsgBadCredentials, "documentation_url": "https://docs.github.com/graphql"})
			return
		}
		if s.fault(w, r, RouteGraphQL) {
			return
		}
		st, _ := r.Context().Value(specKey{}).(*specState)
		var body []byte
		if st != nil {
			body = st.body
		}
		s.graphql(w, r, access, body)
	})
}

type gqlRequest struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
}

// graphql validates the request against GitHub's schema and runs it. A
// query the schema does not allow is a violation (like a REST request the
// description does not allow) and GitHub's answer: 200 with "errors".
func (s *Server) graphql(w http.ResponseWriter, r *http.Request, access accessLevel, body []byte) {
	schema, err := loadGraphQL()
	if err != nil {
		s.violation(r, "%v", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": err.Error()})
		return
	}
	var req gqlRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || req.Query == "" {
		s.violation(r, "request: body is not {\"query\": ...}")
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "documentation_url": "https://docs.github.com/graphql"})
		return
	}
	doc, errs := gqlparser.LoadQuery(schema, req.Query)
	if len(errs) > 0 {
		s.gqlInvalid(w, r, errs)
		return
	}
	var op *ast.OperationDefinition
	switch {
	case req.OperationName != "":
		op = doc.Operations.ForName(req.OperationName)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	if op == nil {
		s.gqlInvalid(w, r, gqlerror.List{gqlerror.Errorf("the request names no single operation to run (operationName %q)", req.OperationName)})
		return
	}
	vars, err := validator.VariableValues(schema, op, req.Variables)
	if err != nil {
		ge, ok := err.(*gqlerror.Error)
		if !ok {
			ge = gqlerror.Wrap(err)
		}
		s.gqlInvalid(w, r, gqlerror.List{ge})
		return
	}
	if op.Operation == ast.Mutation {
		if s.overContentLimit() {
			s.secondaryLimited(w, r)
			return
		}
	}
	if !s.gqlPermitted(r.Header.Get("Authorization"), op.Operation == ast.Mutation) {
		if op.Operation == ast.Mutation {
			writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": []map[string]any{{"type": gqlForbidden, "message": MsgNoWriteAccess}}})
			return
		}
		writeJSON(w, http.StatusForbidden, map[string]any{"message": MsgNoWriteAccess, "documentation_url": "https://docs.github.com/graphql"})
		return
	}
	write := access == readWrite && s.gqlPermitted(r.Header.Get("Authorization"), true)
	x := &gqlExec{s: s, schema: schema, vars: vars, write: write, doc: doc}
	root := x.query()
	if op.Operation == ast.Mutation {
		root = x.mutation()
	}
	data := x.selection(root, op.SelectionSet, nil)
	out := map[string]any{"data": data}
	if len(x.errs) > 0 {
		out["errors"] = x.errs
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) gqlInvalid(w http.ResponseWriter, r *http.Request, errs gqlerror.List) {
	var out []map[string]any
	for _, e := range errs {
		s.violation(r, "request: GitHub's GraphQL schema does not allow it: %s", e.Message)
		m := map[string]any{"message": e.Message}
		if len(e.Locations) > 0 {
			m["locations"] = e.Locations
		}
		if len(e.Path) > 0 {
			m["path"] = e.Path
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"errors": out})
}

// gqlObject is a value of an object type: its type name and how it
// resolves each field (with the field's arguments, variables applied).
type gqlObject struct {
	typ string
	get func(field string, args map[string]any) (any, *gqlError)
}

type gqlError struct{ typ, msg string }

type gqlExec struct {
	s      *Server
	schema *ast.Schema
	doc    *ast.QueryDocument
	vars   map[string]any
	write  bool
	errs   []map[string]any
}

// selection resolves sel on obj, keeping the query's field order.
func (x *gqlExec) selection(obj *gqlObject, sel ast.SelectionSet, path []any) orderedMap {
	var out orderedMap
	x.collect(obj, sel, path, &out)
	return out
}

func (x *gqlExec) collect(obj *gqlObject, sel ast.SelectionSet, path []any, out *orderedMap) {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			key := cmp.Or(s.Alias, s.Name)
			p := append(slices.Clone(path), key)
			if s.Name == "__typename" {
				out.set(key, obj.typ)
				continue
			}
			v, gerr := obj.get(s.Name, s.ArgumentMap(x.vars))
			if gerr != nil {
				e := map[string]any{"message": gerr.msg, "path": p}
				if gerr.typ != "" {
					e["type"] = gerr.typ
				}
				if s.Position != nil {
					e["locations"] = []map[string]int{{"line": s.Position.Line, "column": s.Position.Column}}
				}
				x.errs = append(x.errs, e)
				out.set(key, nil)
				continue
			}
			out.set(key, x.value(v, s.SelectionSet, p))
		case *ast.InlineFragment:
			if x.matches(obj.typ, s.TypeCondition) {
				x.collect(obj, s.SelectionSet, path, out)
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && x.matches(obj.typ, s.Definition.TypeCondition) {
				x.collect(obj, s.Definition.SelectionSet, path, out)
			}
		}
	}
}

func (x *gqlExec) value(v any, sel ast.SelectionSet, path []any) any {
	switch v := v.(type) {
	case *gqlObject:
		if v == nil {
			return nil
		}
		return x.selection(v, sel, path)
	case []*gqlObject:
		out := make([]any, len(v))
		for i, o := range v {
			out[i] = x.value(o, sel, append(slices.Clone(path), i))
		}
		return out
	}
	return v
}

// matches reports whether an object of type typ satisfies a fragment's
// type condition (its own type, an interface it implements, a union it is
// in).
func (x *gqlExec) matches(typ, cond string) bool {
	if cond == "" || cond == typ {
		return true
	}
	def := x.schema.Types[cond]
	if def == nil {
		return false
	}
	return slices.ContainsFunc(x.schema.GetPossibleTypes(def), func(d *ast.Definition) bool { return d.Name == typ })
}

type orderedMap struct {
	keys []string
	vals map[string]any
}

func (m *orderedMap) set(k string, v any) {
	if m.vals == nil {
		m.vals = map[string]any{}
	}
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	if old, ok := m.vals[k].(orderedMap); ok {
		if nv, ok := v.(orderedMap); ok { // the same field selected twice: merge
			for _, k2 := range nv.keys {
				old.set(k2, nv.vals[k2])
			}
			v = old
		}
	}
	m.vals[k] = v
}

func (m orderedMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(m.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func unknownField(typ, field string) *gqlError {
	return &gqlError{msg: fmt.Sprintf("fakegithub does not serve %s.%s", typ, field)}
}

func (x *gqlExec) query() *gqlObject {
	return &gqlObject{typ: "Query", get: func(f string, args map[string]any) (any, *gqlError) {
		switch f {
		case "repository":
			owner, _ := args["owner"].(string)
			name, _ := args["name"].(string)
			if !strings.EqualFold(owner, x.s.Owner) || !strings.EqualFold(name, x.s.Repo) {
				return nil, &gqlError{gqlNotFound, fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", owner, name)}
			}
			return x.repository(), nil
		case "node":
			id, _ := args["id"].(string)
			if o := x.node(id); o != nil {
				return o, nil
			}
			return nil, &gqlError{gqlNotFound, fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id)}
		}
		return nil, unknownField("Query", f)
	}}
}

func (x *gqlExec) mutation() *gqlObject {
	return &gqlObject{typ: "Mutation", get: func(f string, args map[string]any) (any, *gqlError) {
		switch f {
		case "resolveReviewThread", "unresolveReviewThread":
			input, _ := args["input"].(map[string]any)
			id, _ := input["threadId"].(string)
			root, pr, ok := x.thread(id)
			if !ok {
				return nil, &gqlError{gqlNotFound, fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id)}
			}
			if !x.write {
				return nil, &gqlError{gqlForbidden, MsgNoWriteAccess}
			}
			by := ""
			if f == "resolveReviewThread" {
				by = x.s.writer()
			}
			x.s.ResolveThread(root.ID, by)
			typ := "ResolveReviewThreadPayload"
			if f == "unresolveReviewThread" {
				typ = "UnresolveReviewThreadPayload"
			}
			thread := x.threadObject(pr, root)
			return &gqlObject{typ: typ, get: func(pf string, _ map[string]any) (any, *gqlError) {
				switch pf {
				case "clientMutationId":
					return input["clientMutationId"], nil
				case "thread":
					return thread, nil
				}
				return nil, unknownField(typ, pf)
			}}, nil
		}
		return nil, unknownField("Mutation", f)
	}}
}

func (x *gqlExec) repository() *gqlObject {
	full := x.s.Owner + "/" + x.s.Repo
	return &gqlObject{typ: "Repository", get: func(f string, args map[string]any) (any, *gqlError) {
		switch f {
		case "id":
			return nodeID("R", stableID("repo:"+full)), nil
		case "name":
			return x.s.Repo, nil
		case "nameWithOwner":
			return full, nil
		case "pullRequest":
			n, _ := args["number"].(int64)
			x.s.mu.Lock()
			pr := x.s.pulls[int(n)]
			x.s.mu.Unlock()
			if pr == nil {
				return nil, &gqlError{gqlNotFound, fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", n)}
			}
			return x.pullRequest(pr), nil
		}
		return nil, unknownField("Repository", f)
	}}
}

func (x *gqlExec) pullRequest(pr *PullRequest) *gqlObject {
	full := x.s.Owner + "/" + x.s.Repo
	return &gqlObject{typ: "PullRequest", get: func(f string, args map[string]any) (any, *gqlError) {
		switch f {
		case "id":
			return nodeID("PR", stableID(fmt.Sprintf("pull:%s#%d", full, pr.Number))), nil
		case "number":
			return pr.Number, nil
		case "headRefOid":
			return pr.HeadSHA, nil
		case "baseRefOid":
			return pr.BaseSHA, nil
		case "reviewThreads":
			var threads []*gqlObject
			for _, c := range x.s.ReviewComments(pr.Number) {
				if c.InReplyTo == 0 {
					threads = append(threads, x.threadObject(pr, c))
				}
			}
			return x.connection("reviewThreads", "PullRequestReviewThread", threads, args)
		}
		return nil, unknownField("PullRequest", f)
	}}
}

// thread finds the thread whose node id is id: its first comment and pull
// request.
func (x *gqlExec) thread(id string) (ReviewComment, *PullRequest, bool) {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	for n, cs := range x.s.comments {
		for _, c := range cs {
			if c.InReplyTo == 0 && ThreadID(c.ID) == id {
				return c, x.s.pulls[n], x.s.pulls[n] != nil
			}
		}
	}
	return ReviewComment{}, nil, false
}

func (x *gqlExec) node(id string) *gqlObject {
	if root, pr, ok := x.thread(id); ok {
		return x.threadObject(pr, root)
	}
	x.s.mu.Lock()
	var found *ReviewComment
	var pr *PullRequest
	for n, cs := range x.s.comments {
		for _, c := range cs {
			if nodeID("PRRC", c.ID) == id {
				found, pr = &c, x.s.pulls[n]
			}
		}
	}
	x.s.mu.Unlock()
	if found != nil && pr != nil {
		return x.commentObject(pr, *found)
	}
	return nil
}

func (x *gqlExec) threadObject(pr *PullRequest, root ReviewComment) *gqlObject {
	return &gqlObject{typ: "PullRequestReviewThread", get: func(f string, args map[string]any) (any, *gqlError) {
		resolved, by := x.s.ThreadResolved(root.ID)
		if v, ok := x.threadPosition(pr, root, f); ok {
			return v, nil
		}
		switch f {
		case "id":
			return ThreadID(root.ID), nil
		case "isResolved":
			return resolved, nil
		case "isCollapsed":
			return resolved, nil
		case "subjectType":
			return "LINE", nil
		case "viewerCanResolve":
			return x.write && !resolved, nil
		case "viewerCanUnresolve":
			return x.write && resolved, nil
		case "viewerCanReply":
			return x.write, nil
		case "resolvedBy":
			if !resolved {
				return nil, nil
			}
			return x.actor(by, "User"), nil
		case "comments":
			var cs []*gqlObject
			for _, c := range x.s.ReviewComments(pr.Number) {
				if c.ID == root.ID || c.InReplyTo == root.ID {
					cs = append(cs, x.commentObject(pr, c))
				}
			}
			return x.connection("comments", "PullRequestReviewComment", cs, args)
		}
		return nil, unknownField("PullRequestReviewThread", f)
	}}
}

// threadPosition answers a thread's fields about where it sits in the
// diff (path, lines, sides, outdated: see place); ok is false for any
// other field.
func (x *gqlExec) threadPosition(pr *PullRequest, root ReviewComment, f string) (v any, ok bool) {
	at := x.s.place(pr, root)
	side := cmp.Or(root.Side, "RIGHT")
	switch f {
	case "isOutdated":
		return at.outdated, true
	case "path":
		return root.Path, true
	case "line":
		if at.outdated {
			return nil, true
		}
		return at.line, true
	case "startLine":
		if at.outdated || root.StartLine == 0 {
			return nil, true
		}
		return at.startLine, true
	case "originalLine":
		return root.Line, true
	case "originalStartLine":
		if root.StartLine == 0 {
			return nil, true
		}
		return root.StartLine, true
	case "diffSide":
		return side, true
	case "startDiffSide":
		if root.StartLine == 0 {
			return nil, true
		}
		return cmp.Or(root.StartSide, side), true
	}
	return nil, false
}

func (x *gqlExec) commentObject(pr *PullRequest, c ReviewComment) *gqlObject {
	return &gqlObject{typ: "PullRequestReviewComment", get: func(f string, args map[string]any) (any, *gqlError) {
		switch f {
		case "id":
			return nodeID("PRRC", c.ID), nil
		case "reactions":
			return x.reactions(x.s.Reactions(OnReviewComment, c.ID), args)
		case "fullDatabaseId":
			return strconv.FormatInt(c.ID, 10), nil
		case "body":
			return c.Body, nil
		case "path":
			return c.Path, nil
		case "author":
			user := cmp.Or(c.User, "octocat")
			return x.actor(user, userType(user)), nil
		case "createdAt":
			x.s.mu.Lock()
			t := cmp.Or(x.s.times[c.ID].created, x.s.now())
			x.s.mu.Unlock()
			return timestamp(t), nil
		case "url":
			return fmt.Sprintf("%s/%s/%s/pull/%d#discussion_r%d", htmlRoot, x.s.Owner, x.s.Repo, pr.Number, c.ID), nil
		case "replyTo":
			if c.InReplyTo == 0 {
				return nil, nil
			}
			for _, p := range x.s.ReviewComments(pr.Number) {
				if p.ID == c.InReplyTo {
					return x.commentObject(pr, p), nil
				}
			}
			return nil, nil
		case "outdated":
			return x.s.place(pr, c).outdated, nil
		case "diffHunk":
			if at := x.s.place(pr, c); !at.outdated {
				for _, file := range pr.Files {
					if file.Filename == c.Path {
						return diffHunk(file.Patch, cmp.Or(c.Side, "RIGHT"), at.line), nil
					}
				}
			}
			return c.hunk, nil
		}
		return nil, unknownField("PullRequestReviewComment", f)
	}}
}

// reactionContent is REST's reaction name → GraphQL's ReactionContent.
var reactionContent = map[string]string{
	"+1": "THUMBS_UP", "-1": "THUMBS_DOWN", "laugh": "LAUGH", "confused": "CONFUSED",
	"heart": "HEART", "hooray": "HOORAY", "rocket": "ROCKET", "eyes": "EYES",
}

// reactions is a comment's reactions connection, filtered by the content
// argument as GitHub does. Reaction.user is a User: a bot's reaction has
// none.
func (x *gqlExec) reactions(rs []Reaction, args map[string]any) (any, *gqlError) {
	want, _ := args["content"].(string)
	var items []*gqlObject
	for _, r := range rs {
		content := reactionContent[r.Content]
		if want != "" && content != want {
			continue
		}
		items = append(items, &gqlObject{typ: "Reaction", get: func(f string, _ map[string]any) (any, *gqlError) {
			switch f {
			case "id":
				return nodeID("REA", r.ID), nil
			case "content":
				return content, nil
			case "user":
				if login := cmp.Or(r.User, "octocat"); userType(login) != "Bot" {
					return x.actor(login, "User"), nil
				}
				return nil, nil
			case "createdAt":
				x.s.mu.Lock()
				t := cmp.Or(x.s.times[r.ID].created, x.s.now())
				x.s.mu.Unlock()
				return timestamp(t), nil
			}
			return nil, unknownField("Reaction", f)
		}})
	}
	return x.connection("reactions", "Reaction", items, args)
}

func (x *gqlExec) actor(login, typ string) *gqlObject {
	t := "User"
	if typ == "Bot" {
		t = "Bot"
	}
	return &gqlObject{typ: t, get: func(f string, _ map[string]any) (any, *gqlError) {
		switch f {
		case "login":
			return strings.TrimSuffix(login, "[bot]"), nil
		case "id":
			return nodeID(map[string]string{"User": "U", "Bot": "BOT"}[t], stableID("user:"+login)), nil
		}
		return nil, unknownField(t, f)
	}}
}

// connection pages items like GitHub: first or last (1 to 100) is
// required; after and before are opaque cursors.
func (x *gqlExec) connection(name, nodeType string, items []*gqlObject, args map[string]any) (any, *gqlError) {
	lo, hi, gerr := pageWindow(name, len(items), args)
	if gerr != nil {
		return nil, gerr
	}
	page := items[lo:hi]
	connType := nodeType + "Connection"
	return &gqlObject{typ: connType, get: func(f string, _ map[string]any) (any, *gqlError) {
		switch f {
		case "nodes":
			return page, nil
		case "totalCount":
			return len(items), nil
		case "edges":
			edges := make([]*gqlObject, len(page))
			for i, n := range page {
				edges[i] = &gqlObject{typ: nodeType + "Edge", get: func(ef string, _ map[string]any) (any, *gqlError) {
					switch ef {
					case "cursor":
						return encodeCursor(lo + i), nil
					case "node":
						return n, nil
					}
					return nil, unknownField(nodeType+"Edge", ef)
				}}
			}
			return edges, nil
		case "pageInfo":
			return pageInfo(lo, hi, len(items)), nil
		}
		return nil, unknownField(connType, f)
	}}, nil
}

// pageWindow is the page [lo, hi) of n items that a connection's first,
// last, after and before arguments ask for, or GitHub's error for them.
func pageWindow(name string, n int, args map[string]any) (lo, hi int, _ *gqlError) {
	first, hasFirst := args["first"].(int64)
	last, hasLast := args["last"].(int64)
	if !hasFirst && !hasLast {
		return 0, 0, &gqlError{"MISSING_PAGINATION_BOUNDARIES", fmt.Sprintf("You must provide a `first` or `last` value to properly paginate the `%s` connection.", name)}
	}
	for _, b := range []struct {
		v    int64
		set  bool
		name string
	}{{first, hasFirst, "first"}, {last, hasLast, "last"}} {
		if b.set && (b.v < 0 || b.v > 100) {
			return 0, 0, &gqlError{"EXCESSIVE_PAGINATION", fmt.Sprintf("Requesting %d records on the `%s` connection exceeds the `%s` limit of 100 records.", b.v, name, b.name)}
		}
	}
	lo, hi = 0, n
	if after, ok := args["after"].(string); ok {
		if i, ok := decodeCursor(after); ok {
			lo = min(hi, i+1)
		}
	}
	if before, ok := args["before"].(string); ok {
		if i, ok := decodeCursor(before); ok {
			hi = max(lo, min(hi, i))
		}
	}
	if hasFirst {
		hi = min(hi, lo+int(first))
	}
	if hasLast {
		lo = max(lo, hi-int(last))
	}
	return lo, hi, nil
}

// pageInfo is the PageInfo of the page [lo, hi) of n items.
func pageInfo(lo, hi, n int) *gqlObject {
	return &gqlObject{typ: "PageInfo", get: func(pf string, _ map[string]any) (any, *gqlError) {
		switch pf {
		case "hasNextPage":
			return hi < n, nil
		case "hasPreviousPage":
			return lo > 0, nil
		case "startCursor":
			if hi == lo {
				return nil, nil
			}
			return encodeCursor(lo), nil
		case "endCursor":
			if hi == lo {
				return nil, nil
			}
			return encodeCursor(hi - 1), nil
		}
		return nil, unknownField("PageInfo", pf)
	}}
}

func encodeCursor(i int) string {
	return base64.StdEncoding.EncodeToString([]byte("cursor:v2:" + strconv.Itoa(i)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "cursor:v2:"))
	return n, err == nil
}
