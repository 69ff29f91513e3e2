package execution

import (
	"cmp"
	"time"
)

// The route's concurrency under rate limits (REFERENCE D: a 429 cuts it,
// AIMD): a provider that answers 429 because too many calls are in flight
// (a per-key concurrency limit) would otherwise be sent the route's whole
// cap again after every cool-down, and most items would fail rate_limited.
//
//   - A 429 cuts the route's limit, at most once until its cool-down ends
//     (the calls of one burst count once): to half; when the provider was
//     also answering (an answer within the last minute), to the calls it
//     was still serving beside the 429 if that is more; at least by one.
//   - After each run of `limit` accepted answers (once the cool-down is
//     over) one slot comes back, up to the route's cap. When the provider
//     was also accepting calls (an answer within the last minute: it
//     refuses some calls, not all), the limit that drew the 429 is a
//     ceiling for ceilingHold: the limit grows back to one below it only.
//     A storm of 429s with no answer in between leaves no ceiling, so the
//     limit grows back once the storm is over.
//
// The limit is kept by parking bulkhead tokens: the engine holds
// cap - limit tokens of the route's semaphore itself, taken from free slots
// at once and from the next calls to finish, so admission needs no second
// gate.

// ceilingHold is how long the limit that drew a 429 is not reached again.
const ceilingHold = 5 * time.Minute

// limitNow is the route's current concurrency limit. r.mu must be held.
func (r *routeState) limitNow() int { return cap(r.sem) - r.parked - r.owed }

// release returns a call's bulkhead token, or parks it while the limit
// owes one.
func (r *routeState) release() {
	r.mu.Lock()
	if r.owed > 0 {
		r.owed--
		r.parked++
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	<-r.sem
}

// rateLimited cuts the route's limit after a 429 whose cool-down is wait
// (at least a second); r.inflight is the calls still in flight beside it.
func (r *routeState) rateLimited(now time.Time, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.cutUntil) {
		return
	}
	r.cutUntil, r.okRun = now.Add(max(wait, time.Second)), 0
	limit := r.limitNow()
	next := limit / 2
	if answering := !r.lastOK.IsZero() && now.Sub(r.lastOK) <= time.Minute; answering {
		// The calls in flight beside the 429 are being served: the
		// provider's limit is at least that. A burst of 429s to calls sent
		// together (no answer yet) says nothing of the sort.
		next = max(next, r.inflight)
		r.ceiling, r.ceilingUntil = limit, now.Add(ceilingHold)
	}
	next = max(1, min(limit-1, next))
	if next >= limit {
		return
	}
	r.owed += limit - next
	r.stats.ConcurrencyCuts++
	r.stats.MinConcurrency = min(cmp.Or(r.stats.MinConcurrency, cap(r.sem)), next)
	for r.owed > 0 { // free slots are parked at once
		select {
		case r.sem <- struct{}{}:
			r.owed--
			r.parked++
			continue
		default:
		}
		break
	}
}

// accepted counts an accepted answer: after limit of them since the last
// change, once the cool-down is over, one slot comes back (below the
// ceiling while it holds).
func (r *routeState) accepted(now time.Time) {
	r.mu.Lock()
	r.lastOK = now
	limit := r.limitNow()
	top := cap(r.sem)
	if now.Before(r.ceilingUntil) {
		top = r.ceiling - 1
	}
	if limit >= top || now.Before(r.cutUntil) {
		r.mu.Unlock()
		return
	}
	if r.okRun++; r.okRun < limit {
		r.mu.Unlock()
		return
	}
	r.okRun = 0
	if r.owed > 0 {
		r.owed--
		r.mu.Unlock()
		return
	}
	r.parked--
	r.mu.Unlock()
	<-r.sem
}
