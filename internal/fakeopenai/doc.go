// Package fakeopenai is test support for OpenAI-compatible endpoints: an
// in-memory http.RoundTripper that hands each request straight to an
// http.Handler, so that the real go-openai client (through
// execution/openai) talks to a test's scripted handler without a socket and
// everything runs on testing/synctest's virtual clock; and Script, the one
// scripted chat-completions endpoint, which answers by the file under
// review (a delay, a hang, an error status, a good answer).
//
// Tests import it, and package scenario, whose fault schedules are written
// in its Answer and played by its Serve for `warden eval`. It imports the
// standard library only; nothing of warden.
package fakeopenai
