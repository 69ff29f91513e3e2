// Package eval measures review quality: it runs skills on a corpus of
// cases with known findings and scores each skill on each route (recall,
// precision, localisation, noise on clean changes, tokens, cost, model
// time), records the model's answers so that a run can be replayed with no
// model at all, compares a run with a baseline, and replays a recording
// under fault schedules to score what a quality benchmark does not: true
// outcomes, time against the budget, calls and tokens per item, and the
// recall that survives (RunFaults).
//
// A case is a self-contained directory (see LoadCase): the new side of the
// change's files, the change as a unified diff, and case.toml naming the
// known findings and the clean regions. A corpus of pointers (a .toml file
// of [[cases]], see Pointer) names public commits and labels them in our
// own words instead; its cases are fetched with git into a cache and
// materialised as case directories at run time (Sources), so no code of
// the referenced repositories is ever shipped. The review itself is
// review's: eval plans and runs it with review.NewPlan and review.Run, so
// that what is scored is what `warden review` would report.
//
// eval never reports a quality figure that no model produced: a replayed
// run is labelled replayed, with the models that made the recording, and a
// corpus of synthetic cases is labelled synthetic (mechanics, not quality).
//
// eval imports review, hunks, skills, execution, related, scenario (fault
// schedules) and internal/gitrepo (fetching pointer cases); it must not
// import config, report, action or cmd/warden, and it calls no provider of
// its own (the wiring gives it routes, or builders of routes).
package eval
