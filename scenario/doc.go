// Package scenario owns the scenario file format: a warden.toml's
// [review], [retry] and [[routes]], each route with a fault schedule (what
// its endpoint does to each call, by time and call number), the items of
// the engine's scenario runner and the figures it expects. It decodes a
// file strictly, with the file and line of a mistake, and plays a route's
// schedule (Route.Script). What the warden.toml part means is config's: a
// caller reads ConfigTOML with config.Parse.
//
// The runner of the engine's scenario suite is execution's test code; the
// fault-scored eval (package eval) plays the same schedules against the
// routes of `warden eval`.
//
// It imports execution (profiles), review (outcomes) and
// internal/fakeopenai (the answer vocabulary of a scripted endpoint); it
// must not import config, eval, report, action or cmd/warden.
package scenario
