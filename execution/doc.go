// Package execution runs model requests on routes and owns every rule about
// time and failure: the adaptive request deadline, the nested review, item
// and attempt budgets, the single retry owner, ordered failover, per-route
// bulkheads and circuit breakers, and the classification of every error into
// one Class.
//
// It knows nothing of findings, skills, hunks or GitHub: it runs Requests on
// Routes and reports what happened to each, attempt by attempt.
//
// It must not import warden's review, hunks, skills, report or cmd packages,
// go-openai (confined to execution/openai) or go-github.
package execution
