package secrets_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/testsecret"
	"github.com/org/warden/secrets"
)

func TestWithheld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, want string }{
		{".env", secrets.KindDotenv},
		{"app/.env.production", secrets.KindDotenv},
		{".env.example", secrets.KindDotenv},
		{"deploy/prod.env", secrets.KindDotenv},
		{".envrc", secrets.KindDotenv},
		{"id_ed25519", secrets.KindPrivateKey},
		{"home/.ssh/id_rsa", secrets.KindPrivateKey},
		{"certs/server.PEM", secrets.KindPrivateKey},
		{"config/master.key", secrets.KindPrivateKey},
		{"signing/release.p12", secrets.KindKeystore},
		{"android/app.jks", secrets.KindKeystore},
		{".npmrc", secrets.KindCredentials},
		{"pkg/.pypirc", secrets.KindCredentials},
		{".netrc", secrets.KindCredentials},
		{".aws/credentials", secrets.KindCredentials},
		{"ops/.kube/config", secrets.KindCredentials},
		{".docker/config.json", secrets.KindCredentials},
		{"infra/terraform.tfstate", secrets.KindCredentials},
		{"infra/terraform.tfstate.backup", secrets.KindCredentials},
		// Not secrets by name.
		{"id_ed25519.pub", ""},
		{"environment.go", ""},
		{"src/env.ts", ""},
		{"docs/keys.md", ""},
		{"config/aws.go", ""},
		{"credentials/store.go", ""},
		{"kube/config.go", ""},
	} {
		if got := secrets.Withheld(tc.path); got != tc.want {
			t.Errorf("Withheld(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// found is what a test compares of a match: rule, label and lines, and
// the text it covers.
type found struct {
	Rule, Label   string
	Line, EndLine int
	Text          string
}

func summarize(text string, ms []secrets.Match) []found {
	var out []found
	for _, m := range ms {
		out = append(out, found{m.Rule, m.Label(), m.Line, m.EndLine, text[m.Start:m.End]})
	}
	return out
}

func TestScan(t *testing.T) {
	t.Parallel()
	modelKey := testsecret.ModelKey(1)
	aws := testsecret.AWSAccessKey(2)
	pat := testsecret.GitHubToken(3)
	slack := testsecret.SlackBotToken(4)
	pemKey := testsecret.PKCS8Key()
	sshKey := testsecret.OpenSSHKey(5)
	sshLines := strings.Split(strings.TrimSuffix(sshKey, "\n"), "\n")
	scanner := secrets.NewScanner(secrets.Held("OPENROUTER_API_KEY", modelKey), secrets.Held("SHORT", "ollama"))
	for _, tc := range []struct {
		name, text string
		want       []found
	}{
		{"held value in a .env", "# local settings\nOPENROUTER_API_KEY=" + modelKey + "\nDEBUG=1\n",
			[]found{{secrets.HeldRule, "the value of OPENROUTER_API_KEY", 1, 1, modelKey}}},
		{"held value twice on a line", `k := "` + modelKey + `" + "` + modelKey + `"`,
			[]found{{secrets.HeldRule, "the value of OPENROUTER_API_KEY", 0, 0, modelKey}, {secrets.HeldRule, "the value of OPENROUTER_API_KEY", 0, 0, modelKey}}},
		{"short held value is not matched", "model := \"ollama\"\n", nil},
		{"cloud key in source", "func creds() {\n\tid := \"" + aws + "\"\n}\n",
			[]found{{"aws-access-token", "aws-access-token", 1, 1, aws}}},
		{"token of a well-known shape", "GITHUB_TOKEN: " + pat + "\n",
			[]found{{"github-pat", "github-pat", 0, 0, pat}}},
		{"slack token", "SLACK = '" + slack + "'\n", []found{{"slack-bot-token", "slack-bot-token", 0, 0, slack}}},
		{"gitleaks:allow does not hide it", "id := \"" + aws + "\" // gitleaks:allow\n",
			[]found{{"aws-access-token", "aws-access-token", 0, 0, aws}}},
		{"PEM private key block", "const key = `\n" + pemKey + "`\n",
			[]found{{"private-key", "private-key", 1, strings.Count(pemKey, "\n"), strings.TrimSuffix(pemKey, "\n")}}},
		{"OpenSSH key", sshKey, []found{{"private-key", "private-key", 0, len(sshLines) - 1, strings.TrimSuffix(sshKey, "\n")}}},
		{"block cut after its first lines", strings.Join(sshLines[:3], "\n") + "\n",
			[]found{{"private-key", "private-key", 0, 2, strings.Join(sshLines[:3], "\n")}}},
		{"block cut before its end", "x := 1\n" + strings.Join(sshLines[2:], "\n") + "\ny := 2\n",
			[]found{{"private-key", "private-key", 1, len(sshLines) - 2, strings.Join(sshLines[2:], "\n")}}},
		{"ordinary code", "package x\n\nfunc apiKey(name string) string {\n\treturn os.Getenv(\"API_KEY_\" + strings.ToUpper(name))\n}\n// BEGIN: the private key handling below\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ms := scanner.Scan(tc.text)
			if diff := cmp.Diff(tc.want, summarize(tc.text, ms)); diff != "" {
				t.Errorf("Scan(%q) mismatch (-want +got):\n%s", tc.text, diff)
			}
			red := secrets.Redact(tc.text, ms)
			if got, want := strings.Count(red, "\n"), strings.Count(tc.text, "\n"); got != want {
				t.Errorf("Redact kept %d lines, want %d:\n%s", got, want, red)
			}
			for _, f := range tc.want {
				for _, part := range strings.Split(f.Text, "\n") {
					if strings.Contains(red, part) {
						t.Errorf("Redact left %q in:\n%s", part, red)
					}
				}
				if !strings.Contains(red, "[secret withheld: "+f.Label+"]") {
					t.Errorf("Redact has no placeholder for %s:\n%s", f.Label, red)
				}
			}
			if len(tc.want) == 0 && red != tc.text {
				t.Errorf("Redact changed a text without secrets:\n%s", red)
			}
		})
	}
}

func TestMaskAndValues(t *testing.T) {
	t.Parallel()
	key, token := testsecret.ModelKey(7), testsecret.GitHubToken(8)
	s := secrets.NewScanner(secrets.Held("WARDEN_API_KEY", key), secrets.Held("github-token", token), secrets.Held("again", key))
	if got := s.Mask("auth " + key + " and " + token + "; " + key); got != "auth REDACTED and REDACTED; REDACTED" {
		t.Errorf("Mask = %q", got)
	}
	if got := s.Values(); len(got) != 2 {
		t.Errorf("Values() has %d values, want 2 (repeats left out)", len(got))
	}
	v := secrets.Held("WARDEN_API_KEY", key)
	for _, printed := range []string{v.String(), fmt.Sprintf("%v %+v %#v %s", v, v, v, v)} {
		if strings.Contains(printed, key) {
			t.Errorf("a Value prints its value: %q", printed)
		}
	}
}

func TestRuleSetLoads(t *testing.T) {
	t.Parallel()
	if n := secrets.Rules(); n < 150 {
		t.Errorf("Rules() = %d, want gitleaks' default rule set (over 150 rules)", n)
	}
}
