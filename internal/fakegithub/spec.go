package fakegithub

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// specJSON is GitHub's REST API description (@octokit/openapi 23.0.2,
// MIT; see spec/NOTICE), cut to the operations the fake serves.
//
//go:embed spec/api.github.com.json
var specJSON []byte

// spec is the loaded description and a router over it.
type spec struct {
	doc    *openapi3.T
	router routers.Router
}

// loadSpec parses the embedded description once per process.
var loadSpec = sync.OnceValues(func() (*spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(specJSON)
	if err != nil {
		return nil, fmt.Errorf("fakegithub: load spec/api.github.com.json: %w", err)
	}
	// GitHub's own examples are documentation, not the contract.
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("fakegithub: spec/api.github.com.json: %w", err)
	}
	strictRequestBodies(doc)
	// The fake answers on any host and under /api/v3 (stripped before
	// routing); the description's server is https://api.github.com.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("fakegithub: route spec/api.github.com.json: %w", err)
	}
	return &spec{doc: doc, router: router}, nil
})

// strictRequestBodies makes every object schema written inline in a
// request body reject properties the description does not name. GitHub
// ignores unknown fields silently, so a misspelt field ("conclsion") is a
// bug that GitHub would never report; the fake reports it. Schemas that
// say additionalProperties themselves, and referenced components (shared
// with responses), are left as they are.
func strictRequestBodies(doc *openapi3.T) {
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Ref != "" || ref.Value == nil {
			return
		}
		s := ref.Value
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties.Has = new(false)
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, p := range l {
				walk(p)
			}
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				walk(mt.Schema)
			}
		}
	}
}

// validationOptions: authentication is the fake's own business (it answers
// 401 and 403 like GitHub), and the validator must not fill in defaults.
var validationOptions = &openapi3filter.Options{
	AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
	SkipSettingDefaults: true,
	MultiError:          true,
}

// Violations returns every disagreement with GitHub's REST API description
// seen so far, in arrival order: requests the description does not allow
// (the fake answered 422, or GitHub's own 422 text when it has one) and
// answers of the fake that do not match it (the fake answered 500). Each
// reads "<METHOD> <path>: request: ..." or "<METHOD> <path>: response
// <status>: ...". Start fails the test with them.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

func (s *Server) violation(r *http.Request, format string, args ...any) {
	msg := r.Method + " " + r.URL.Path + ": " + fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.violations = append(s.violations, msg)
	s.mu.Unlock()
}

// specKey is the context key of a request's *specState.
type specKey struct{}

// specState is what the description says of one request: the route match
// for validating the answer, and the request's violation, which the
// handler answers after its own GitHub-worded checks and before it changes
// anything (specOK).
type specState struct {
	// route is the route the request was served as (a Routes entry),
	// when the mux pattern is not itself one (handleEither).
	route string
	body  []byte
	in    *openapi3filter.RequestValidationInput
	err   error
}

// validateRequest checks r (its path already without /api/v3) against the
// description's operation for route, the pattern the fake matched, and
// records what the description does not allow.
func (s *Server) validateRequest(r *http.Request, route string) {
	st, _ := r.Context().Value(specKey{}).(*specState)
	if st == nil {
		return
	}
	sp, err := loadSpec()
	if err != nil {
		st.err = err
		s.violation(r, "%v", err)
		return
	}
	rt, params, err := sp.router.FindRoute(r)
	if err != nil {
		st.err = fmt.Errorf("the fake serves %s, GitHub's description has no such operation: %w", route, err)
		s.violation(r, "request: %v", st.err)
		return
	}
	if got := rt.Method + " " + rt.Path; got != route {
		st.err = fmt.Errorf("the fake routed the request to %s, GitHub's description to %s", route, got)
		s.violation(r, "request: %v", st.err)
		return
	}
	vr := r.Clone(r.Context())
	vr.Body = io.NopCloser(bytes.NewReader(st.body))
	st.in = &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: rt, Options: validationOptions}
	if err := openapi3filter.ValidateRequest(r.Context(), st.in); err != nil {
		st.err = errors.New(oneLineError(err))
		s.violation(r, "request: %v", st.err)
	}
}

// specOK answers 422 with the request's violation of the description, if
// it had one. Handlers call it once their own checks, worded like GitHub,
// have passed, and before they change state.
func (s *Server) specOK(w http.ResponseWriter, r *http.Request, route string) bool {
	st, _ := r.Context().Value(specKey{}).(*specState)
	if st == nil || st.err == nil {
		return true
	}
	s.unprocessable(w, r, route, "Invalid request.\n\n"+st.err.Error())
	return false
}

// checkResponse validates the fake's buffered answer rec to the request
// in and writes it to w, or, when it violates the description, records
// that and writes a 500 saying so.
func (s *Server) checkResponse(w http.ResponseWriter, r *http.Request, in *openapi3filter.RequestValidationInput, rec *httptest.ResponseRecorder) (status int) {
	body := rec.Body.Bytes()
	if in != nil {
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in,
			Status:                 rec.Code,
			Header:                 rec.Header(),
			Options:                validationOptions,
		}
		out.SetBodyBytes(body)
		if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
			msg := oneLineError(err)
			s.violation(r, "response %d: %s", rec.Code, msg)
			for k := range w.Header() {
				w.Header().Del(k)
			}
			writeJSON(w, http.StatusInternalServerError, map[string]any{
				"message":           "fakegithub: the fake's answer violates GitHub's REST API description: " + msg,
				"documentation_url": "https://docs.github.com/rest",
				"status":            strconv.Itoa(http.StatusInternalServerError),
			})
			return http.StatusInternalServerError
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(body)
	return rec.Code
}

// oneLineError flattens kin-openapi's multi-line errors (schema, value and
// path on separate lines) into one line per problem, joined with "; ".
func oneLineError(err error) string {
	var parts []string
	var me openapi3.MultiError
	if errors.As(err, &me) {
		for _, e := range me {
			parts = append(parts, oneLineError(e))
		}
		return strings.Join(parts, "; ")
	}
	var re *openapi3filter.RequestError
	if errors.As(err, &re) {
		var inner openapi3.MultiError
		if errors.As(re.Err, &inner) && len(inner) > 0 {
			prefix := ""
			if re.Parameter != nil {
				prefix = "parameter " + strconv.Quote(re.Parameter.Name) + ": "
			} else if re.RequestBody != nil {
				prefix = "body: "
			}
			for _, e := range inner {
				parts = append(parts, prefix+oneLineError(e))
			}
			return strings.Join(parts, "; ")
		}
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		path := strings.Join(se.JSONPointer(), "/")
		if path == "" {
			return se.Error()[:firstLine(se.Error())]
		}
		return "/" + path + ": " + se.Reason
	}
	msg := err.Error()
	return strings.Join(strings.Fields(msg[:firstLine(msg)]), " ")
}

func firstLine(s string) int {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return i
	}
	return len(s)
}
