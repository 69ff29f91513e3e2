package actiontest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// provenanceBundle is the release asset install.sh verifies against, as
// release.yml uploads it.
const provenanceBundle = "provenance.sigstore.jsonl"

// The stand-in verifier (testdata/ghverify, a `gh attestation verify` that
// trusts a locally made key instead of Sigstore's roots: there is no
// network in tests), built once, and the key it trusts.
var (
	ghverifyDir    string // holds the verifier as "gh"
	trustedKey     *ecdsa.PrivateKey
	trustedKeyFile string
)

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "warden-actiontest-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if runtime.GOOS != "windows" {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "gh"), "./testdata/ghverify")
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "building the stand-in verifier: %v\n%s", err, out)
				return 1
			}
			ghverifyDir = filepath.Join(dir, "bin")
		}
		if trustedKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		trustedKeyFile = filepath.Join(dir, "trusted.pem")
		if err := os.WriteFile(trustedKeyFile, publicPEM(&trustedKey.PublicKey), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

func publicPEM(k *ecdsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// attestation is what a release's provenance says and who signed it.
type attestation struct {
	key        *ecdsa.PrivateKey // nil: the trusted key
	repository string            // "": org/warden
	workflow   string            // "": .github/workflows/release.yml
	ref        string            // "": refs/tags/<tag>
	digest     []byte            // nil: the archive's
}

// bundle is a Sigstore bundle line (JSON lines, as actions/attest writes
// it) holding a DSSE envelope of an in-toto statement with SLSA build
// provenance, shaped like GitHub's: the archive as its subject, the
// workflow that built it in the predicate.
func (a attestation) bundle(tag, asset string, archive []byte) []byte {
	sum := sha256.Sum256(archive)
	digest := sum[:]
	if a.digest != nil {
		digest = a.digest
	}
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	st := map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": asset, "digest": map[string]string{"sha256": fmt.Sprintf("%x", digest)}}},
		"predicateType": "https://slsa.dev/provenance/v1",
		"predicate": map[string]any{"buildDefinition": map[string]any{
			"buildType": "https://actions.github.io/buildtypes/workflow/v1",
			"externalParameters": map[string]any{"workflow": map[string]string{
				"ref": or(a.ref, "refs/tags/"+tag), "repository": "https://github.com/" + or(a.repository, "org/warden"),
				"path": or(a.workflow, ".github/workflows/release.yml"),
			}},
		}},
	}
	payload, err := json.Marshal(st)
	if err != nil {
		panic(err)
	}
	const payloadType = "application/vnd.in-toto+json"
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(payloadType), payloadType, len(payload), payload)
	h := sha256.Sum256([]byte(pae))
	key := a.key
	if key == nil {
		key = trustedKey
	}
	sig, err := ecdsa.SignASN1(rand.Reader, key, h[:])
	if err != nil {
		panic(err)
	}
	line, err := json.Marshal(map[string]any{
		"mediaType":            "application/vnd.dev.sigstore.bundle.v0.3+json",
		"verificationMaterial": map[string]any{"publicKey": map[string]string{"hint": "local test key"}},
		"dsseEnvelope": map[string]any{"payload": base64.StdEncoding.EncodeToString(payload), "payloadType": payloadType,
			"signatures": []any{map[string]string{"sig": base64.StdEncoding.EncodeToString(sig)}}},
	})
	if err != nil {
		panic(err)
	}
	return append(line, '\n')
}

// provenanceRunner is a runner whose install step reaches a release of
// org/warden v1.2.3 on rel.
func provenanceRunner(t *testing.T, rel *release) *runner {
	t.Helper()
	r := newRunner(t)
	r.env["WARDEN_ACTION_REF"] = "v1.2.3"
	r.env["WARDEN_ACTION_REPOSITORY"] = "org/warden"
	r.env["WARDEN_DOWNLOAD_BASE_URL"] = rel.URL
	return r
}

// installedNothing fails unless the runner has no warden: nothing in the
// tool cache, nothing on GITHUB_PATH, no outputs.
func installedNothing(t *testing.T, r *runner) {
	t.Helper()
	if matches, _ := filepath.Glob(filepath.Join(r.cache, "warden", "*", "*")); len(matches) > 0 {
		t.Errorf("the tool cache holds %v after a refused install", matches)
	}
	for _, f := range []string{r.pathFile, r.outputFile} {
		if data, err := os.ReadFile(f); err == nil && len(data) > 0 {
			t.Errorf("%s was written after a refused install: %q", f, data)
		}
	}
}

// TestInstallVerifiesProvenance: a release whose provenance bundle is a
// valid attestation of the archive, by org/warden's release workflow at
// the tag, installs, and the log says what was verified.
func TestInstallVerifiesProvenance(t *testing.T) {
	t.Parallel()
	rel := newRelease(t)
	asset := rel.publish(t, "v1.2.3", nil)
	r := provenanceRunner(t, rel)
	out, err := r.install(t)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if o := r.outputs(t); o["source"] != "release" || o["version"] != "1.2.3" {
		t.Errorf("outputs %v, want release 1.2.3", o)
	}
	if want := "verified the build provenance of " + asset + ": built by org/warden/.github/workflows/release.yml at refs/tags/v1.2.3"; !strings.Contains(out, want) {
		t.Errorf("the log does not say %q:\n%s", want, out)
	}
}

// TestInstallRefusesUnverifiedProvenance: an archive whose provenance does
// not verify is never unpacked or installed, whatever its checksum says,
// and the step fails naming the archive and the way out for a mirror.
func TestInstallRefusesUnverifiedProvenance(t *testing.T) {
	t.Parallel()
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		publish func(t *testing.T, rel *release) // after a good release of v1.2.3
		env     map[string]string
		want    string
	}{
		{"tampered archive with matching checksums", func(t *testing.T, rel *release) {
			// Whoever can replace release assets replaces checksums.txt too:
			// only the provenance still names the original archive.
			evil := tarGz(t, map[string]string{"warden": "#!/bin/sh\necho pwned\n"})
			rel.files["/v1.2.3/warden_1.2.3_linux_amd64.tar.gz"] = evil
			rel.files["/v1.2.3/checksums.txt"] = fmt.Appendf(nil, "%x  warden_1.2.3_linux_amd64.tar.gz\n", sha256.Sum256(evil))
		}, nil, "no subject has the artifact's digest"},
		{"signed with another key", func(t *testing.T, rel *release) {
			rel.files["/v1.2.3/"+provenanceBundle] = attestation{key: other}.bundle("v1.2.3", "warden_1.2.3_linux_amd64.tar.gz", rel.files["/v1.2.3/warden_1.2.3_linux_amd64.tar.gz"])
		}, nil, "the signature does not verify"},
		{"built by another repository", func(t *testing.T, rel *release) {
			rel.files["/v1.2.3/"+provenanceBundle] = attestation{repository: "mallory/warden"}.bundle("v1.2.3", "warden_1.2.3_linux_amd64.tar.gz", rel.files["/v1.2.3/warden_1.2.3_linux_amd64.tar.gz"])
		}, nil, "not org/warden"},
		{"built by another workflow", func(t *testing.T, rel *release) {
			rel.files["/v1.2.3/"+provenanceBundle] = attestation{workflow: ".github/workflows/pr.yml"}.bundle("v1.2.3", "warden_1.2.3_linux_amd64.tar.gz", rel.files["/v1.2.3/warden_1.2.3_linux_amd64.tar.gz"])
		}, nil, "not org/warden/.github/workflows/release.yml"},
		{"built from another ref", func(t *testing.T, rel *release) {
			rel.files["/v1.2.3/"+provenanceBundle] = attestation{ref: "refs/heads/feature"}.bundle("v1.2.3", "warden_1.2.3_linux_amd64.tar.gz", rel.files["/v1.2.3/warden_1.2.3_linux_amd64.tar.gz"])
		}, nil, "not refs/tags/v1.2.3"},
		{"no provenance in the release", func(t *testing.T, rel *release) {
			delete(rel.files, "/v1.2.3/"+provenanceBundle)
		}, nil, "release v1.2.3 has no " + provenanceBundle + ", so where warden_1.2.3_linux_amd64.tar.gz was built cannot be verified: refusing to install it (a release made before provenance, or a mirror without it: set the action's verify-provenance input to false)"},
		{"no GitHub CLI", nil, map[string]string{"WARDEN_GH": "gh-not-installed"},
			"needs the GitHub CLI (gh), which is not on this runner"},
		{"a bad input", nil, map[string]string{"WARDEN_VERIFY_PROVENANCE": "maybe"}, "verify-provenance input 'maybe' is not true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rel := newRelease(t)
			rel.publish(t, "v1.2.3", nil)
			if tc.publish != nil {
				rel.mu.Lock()
				tc.publish(t, rel)
				rel.mu.Unlock()
			}
			r := provenanceRunner(t, rel)
			for k, v := range tc.env {
				r.env[k] = v
			}
			out, err := r.install(t)
			if err == nil {
				t.Fatalf("install succeeded; want it refused:\n%s", out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("the failure does not say %q:\n%s", tc.want, out)
			}
			if strings.Contains(out, "pwned") {
				t.Errorf("the tampered binary ran:\n%s", out)
			}
			installedNothing(t, r)
		})
	}
}

// TestInstallProvenanceOptOut: verify-provenance: false (a mirror that
// cannot serve the bundle) installs on the checksum alone, without gh, and
// says so.
func TestInstallProvenanceOptOut(t *testing.T) {
	t.Parallel()
	rel := newRelease(t)
	asset := rel.publish(t, "v1.2.3", nil)
	rel.mu.Lock()
	delete(rel.files, "/v1.2.3/"+provenanceBundle)
	rel.mu.Unlock()
	r := provenanceRunner(t, rel)
	r.env["WARDEN_VERIFY_PROVENANCE"] = "false"
	r.env["WARDEN_GH"] = "gh-not-installed"
	out, err := r.install(t)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if want := "not verifying the build provenance of " + asset + " (verify-provenance: false)"; !strings.Contains(out, want) {
		t.Errorf("the log does not say %q:\n%s", want, out)
	}
	for _, p := range rel.requests() {
		if strings.HasSuffix(p, provenanceBundle) {
			t.Errorf("the opted-out install still asked for %s", p)
		}
	}
}
