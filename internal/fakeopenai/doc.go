// Package fakeopenai is test support for OpenAI-compatible endpoints: an
// in-memory http.RoundTripper that hands each request straight to an
// http.Handler, so that the real go-openai client (through
// execution/openai) talks to a test's scripted handler without a socket and
// everything runs on testing/synctest's virtual clock. What a handler
// answers, and when, stays with the test that scripts it.
//
// Only tests may import it. It imports the standard library only; nothing
// of warden.
package fakeopenai
