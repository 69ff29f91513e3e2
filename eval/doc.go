// Package eval measures review quality: it runs skills on a corpus of
// cases with known findings and scores each skill on each route (recall,
// precision, localisation, noise on clean changes, tokens, cost, model
// time), records the model's answers so that a run can be replayed with no
// model at all, and compares a run with a baseline.
//
// A case is a self-contained directory (see LoadCase): the new side of the
// change's files, the change as a unified diff, and case.toml naming the
// known findings and the clean regions. The review itself is review's:
// eval plans and runs it with review.NewPlan and review.Run, on one route
// at a time, so that what is scored is what `warden review` would report.
//
// eval never reports a quality figure that no model produced: a replayed
// run is labelled replayed, with the models that made the recording, and a
// corpus of synthetic cases is labelled synthetic (mechanics, not quality).
//
// eval imports review, hunks, skills and execution; it must not import
// report, action or cmd/warden, and it calls no provider of its own (the
// wiring gives it routes).
package eval
