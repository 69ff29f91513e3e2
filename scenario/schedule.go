package scenario

import (
	"cmp"
	"time"

	"github.com/org/warden/internal/fakeopenai"
)

// Script is the route's fault schedule as a scripted endpoint runs it: the
// answer to call n (0-based, on this route) arriving at time at since the
// review's start; start is the schedule's clock when the review starts,
// inFlight how many calls the endpoint is answering now.
func (r Route) Script(start time.Duration, inFlight func() int) func(n int, at time.Duration) fakeopenai.Answer {
	seed := uint64(0)
	for _, c := range r.Name {
		seed = seed*31 + uint64(c)
	}
	return func(n int, at time.Duration) fakeopenai.Answer {
		at += start
		var held []Fault
		total := 0.0
		for _, f := range r.Faults {
			if at < time.Duration(f.From) || (f.Until > 0 && at >= time.Duration(f.Until)) ||
				n < f.FirstCall || (f.LastCall > 0 && n >= f.LastCall) || (f.InFlightOver > 0 && inFlight() <= f.InFlightOver) {
				continue
			}
			held = append(held, f)
			total += cmp.Or(f.Weight, 1)
		}
		if len(held) == 0 {
			return fakeopenai.Answer{Delay: time.Second}
		}
		pick := Unit(seed, n) * total
		f := held[len(held)-1]
		for _, h := range held {
			if pick < cmp.Or(h.Weight, 1) {
				f = h
				break
			}
			pick -= cmp.Or(h.Weight, 1)
		}
		rp := fakeopenai.Answer{
			Delay: time.Duration(f.Delay), Hang: f.Hang, Keepalive: time.Duration(f.Keepalive), Status: f.Status, Header: f.Headers,
			Code: f.Code, Mode: f.Mode, Every: time.Duration(f.Every), Count: f.Count, StreamError: f.Mode == "stream_error",
			Content: f.Content,
		}
		if f.Latency != nil {
			rp.Delay = f.Latency.Sample(Unit(f.Latency.Seed, n))
		}
		return rp
	}
}

// Unit is a uniform draw in [0, 1) for call n of a seeded schedule: the
// splitmix64 finalizer of seed and n, so that draws of neighbouring calls
// are independent and a call's draw does not depend on the calls before it.
func Unit(seed uint64, n int) float64 {
	z := seed + uint64(n+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
