// Package openai is warden's execution.Provider for any OpenAI-compatible
// chat-completions endpoint: OpenAI, OpenRouter, LiteLLM, Ollama, vLLM.
//
// It owns the go-openai adapter and everything that has to happen on the
// wire for the engine to stay bounded and honest: one HTTP request per
// Complete and no timeout but the caller's context; the response-healing
// plugin injected into the request body; response headers captured for
// Retry-After; an SSE filter that drops comment lines (": OPENROUTER
// PROCESSING", keep-alives) before go-openai parses the stream and turns
// in-stream error events into *execution.ProviderError; first-token and idle
// watchdogs; and the translation of every answer and error into execution's
// vocabulary, with the API key redacted from every message it builds.
//
// It is the only package that imports github.com/sashabaranov/go-openai. It
// must not import warden's review, hunks, skills, report or cmd packages, or
// go-github.
package openai
