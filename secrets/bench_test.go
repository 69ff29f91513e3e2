package secrets_test

import (
	"os"
	"strings"
	"testing"

	"github.com/org/warden/internal/testsecret"
	"github.com/org/warden/secrets"
)

// BenchmarkScan scans a chunk-sized text (about 8,000 characters of
// warden's own Go source, the size hunks cuts chunks at) without a secret
// and with three, and with one held value: the cost of keeping secrets out
// of one request.
func BenchmarkScan(b *testing.B) {
	src, err := os.ReadFile("scan.go")
	if err != nil {
		b.Fatal(err)
	}
	clean := string(src[:min(len(src), 8000)])
	dirty := clean + "\nid := \"" + testsecret.AWSAccessKey(1) + "\"\ntok := \"" + testsecret.GitHubToken(2) + "\"\n" + testsecret.PKCS8Key()
	s := secrets.NewScanner(secrets.Held("WARDEN_API_KEY", testsecret.ModelKey(3)))
	s.Scan("warm up: load the rule set once")
	for _, tc := range []struct{ name, text string }{{"clean", clean}, {"three-secrets", dirty}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				if ms := s.Scan(tc.text); (len(ms) == 0) != strings.HasPrefix(tc.name, "clean") {
					b.Fatalf("%d matches", len(ms))
				}
			}
		})
	}
}
