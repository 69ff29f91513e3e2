// Package fakegithub is a validating, recording fake of the part of
// GitHub's REST API that warden uses, for tests: check runs, pull requests,
// their files, reviews and review comments, and logins' repository
// permissions; and of GitHub Actions as far as warden's state between
// events needs it: workflow runs with their event, head repository and
// workflow path, the Actions cache with GitHub's documented scoping by
// ref and its cache-mode, and workflow artifacts, uploaded through the
// runtime services with a job's token and read back across refs through
// the REST API (actions.go, actions_runtime.go; RuntimeClient is the
// runner's side), with concurrency groups' pending-job rule
// (actions_concurrency.go). Every author_association is derived from the
// login's place in the repository (associations.go), and a check run is
// written only by the GitHub App that created it (apps.go). It holds state, answers like GitHub (same JSON shapes,
// pagination with Link headers, the same 401, 403, 404 and 422 answers for
// what GitHub rejects), records every request, and can be scripted to
// answer a route with a rate limit or a server error a given number of
// times.
//
// It is served under both "/" (api.github.com style) and "/api/v3/" (GitHub
// Enterprise Server style), over a loopback httptest server (Start) or an
// in-memory http.RoundTripper for testing/synctest (Transport).
//
// Every request is checked against GitHub's own REST API description
// (spec/api.github.com.json, cut from the npm package @octokit/openapi) with
// kin-openapi, and so is every answer of the fake: a field name, type or
// enum value the description does not allow, or a required field left
// out, is a violation. A request's violation gets a 422 (GitHub's own text
// when the fake knows it), an answer's a 500; Violations lists them and
// Start fails the test with them. Request bodies are held stricter than
// the description in one way: an unknown field is a violation, because
// GitHub ignores it silently.
//
// The fake is test support: besides the standard library it imports only
// kin-openapi, to read GitHub's description, and never a package of this
// module or the GitHub client library warden uses, so that it cannot share
// a mistake with the code it checks.
package fakegithub
