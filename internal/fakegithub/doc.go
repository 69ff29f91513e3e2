// Package fakegithub is a validating, recording fake of the part of
// GitHub's REST API that warden uses, for tests: check runs, pull requests,
// their files, reviews and review comments. It holds state, answers like
// GitHub (same JSON shapes, pagination with Link headers, the same 401, 403,
// 404 and 422 answers for what GitHub rejects), records every request, and
// can be scripted to answer a route with a rate limit or a server error a
// given number of times.
//
// It is served under both "/" (api.github.com style) and "/api/v3/" (GitHub
// Enterprise Server style), over a loopback httptest server (Start) or an
// in-memory http.RoundTripper for testing/synctest (Transport).
//
// The fake is test support: it uses only the standard library and must not
// import any package of this module or any third-party module, so that it
// cannot share a mistake with the code it checks.
package fakegithub
