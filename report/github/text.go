package github

import "strings"

// closeFences appends a closing fence when model text leaves a fenced code
// block open, so that what follows it (a suggestion, the fingerprint
// marker) is not swallowed.
func closeFences(s string) string {
	var open string // the opening fence, "" when none is open
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue
		}
		for _, c := range []byte{'`', '~'} {
			n := 0
			for n < len(t) && t[n] == c {
				n++
			}
			if n < 3 {
				continue
			}
			switch {
			case open == "":
				open = t[:n]
			case open[0] == c && n >= len(open) && strings.TrimSpace(t[n:]) == "":
				open = ""
			}
		}
	}
	if open != "" {
		return s + "\n" + open
	}
	return s
}
