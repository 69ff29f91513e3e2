// Command ghverify stands in for `gh attestation verify FILE --bundle B
// --repo OWNER/REPO --signer-workflow OWNER/REPO/PATH --source-ref REF` in
// scripts/install.sh's tests, which have no network: it checks a bundle
// made with a locally made key instead of Sigstore's public-good roots. It
// does what gh documents for that command: it reads the bundle (one
// Sigstore bundle per line), keeps the attestations whose DSSE signature
// verifies (ECDSA P-256 over the envelope's pre-authentication encoding,
// with the public key in $GHVERIFY_TRUSTED_KEY, a PEM file), whose in-toto
// statement has a subject with FILE's SHA-256 and whose SLSA provenance
// names the repository, workflow and ref asked for; it exits 0 when one
// does and 1, saying why, when none does.
//
// It is built by the tests (go build); it is not part of warden.
package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

type bundle struct {
	DSSE struct {
		Payload     string `json:"payload"`
		PayloadType string `json:"payloadType"`
		Signatures  []struct {
			Sig string `json:"sig"`
		} `json:"signatures"`
	} `json:"dsseEnvelope"`
}

type statement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string `json:"predicateType"`
	Predicate     struct {
		BuildDefinition struct {
			ExternalParameters struct {
				Workflow struct {
					Ref, Repository, Path string
				} `json:"workflow"`
			} `json:"externalParameters"`
		} `json:"buildDefinition"`
	} `json:"predicate"`
}

func main() {
	if len(os.Args) < 4 || os.Args[1] != "attestation" || os.Args[2] != "verify" {
		fmt.Fprintln(os.Stderr, "usage: gh attestation verify FILE --bundle B --repo R --signer-workflow W --source-ref REF")
		os.Exit(2)
	}
	file := os.Args[3]
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	bundlePath := fs.String("bundle", "", "")
	repo := fs.String("repo", "", "")
	signer := fs.String("signer-workflow", "", "")
	ref := fs.String("source-ref", "", "")
	fs.Parse(os.Args[4:])
	if err := verify(file, *bundlePath, *repo, *signer, *ref); err != nil {
		fmt.Fprintf(os.Stderr, "✗ Verification failed\n%v\n", err)
		os.Exit(1)
	}
	fmt.Println("✓ Verification succeeded!")
}

func verify(file, bundlePath, repo, signer, ref string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	keyPEM, err := os.ReadFile(os.Getenv("GHVERIFY_TRUSTED_KEY"))
	if err != nil {
		return fmt.Errorf("trusted key: %w", err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return errors.New("trusted key: not PEM")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return err
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		return errors.New("trusted key: not ECDSA")
	}
	f, err := os.Open(bundlePath)
	if err != nil {
		return err
	}
	defer f.Close()
	var reasons []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := check(sc.Bytes(), key, digest, repo, signer, ref); err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		return nil
	}
	if len(reasons) == 0 {
		return errors.New("no attestation in the bundle")
	}
	return errors.New(strings.Join(reasons, "; "))
}

func check(line []byte, key *ecdsa.PublicKey, digest, repo, signer, ref string) error {
	var b bundle
	if err := json.Unmarshal(line, &b); err != nil {
		return fmt.Errorf("bundle: %v", err)
	}
	payload, err := base64.StdEncoding.DecodeString(b.DSSE.Payload)
	if err != nil || len(b.DSSE.Signatures) == 0 {
		return errors.New("bundle: no signed payload")
	}
	sig, err := base64.StdEncoding.DecodeString(b.DSSE.Signatures[0].Sig)
	if err != nil {
		return errors.New("bundle: bad signature encoding")
	}
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(b.DSSE.PayloadType), b.DSSE.PayloadType, len(payload), payload)
	h := sha256.Sum256([]byte(pae))
	if !ecdsa.VerifyASN1(key, h[:], sig) {
		return errors.New("the signature does not verify with the trusted key")
	}
	var st statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return fmt.Errorf("statement: %v", err)
	}
	if st.PredicateType != "https://slsa.dev/provenance/v1" {
		return fmt.Errorf("predicate type %q is not SLSA provenance", st.PredicateType)
	}
	found := false
	for _, s := range st.Subject {
		found = found || s.Digest["sha256"] == digest
	}
	if !found {
		return fmt.Errorf("no subject has the artifact's digest sha256:%s", digest)
	}
	w := st.Predicate.BuildDefinition.ExternalParameters.Workflow
	if w.Repository != "https://github.com/"+repo {
		return fmt.Errorf("built in %s, not %s", w.Repository, repo)
	}
	if repo+"/"+w.Path != signer {
		return fmt.Errorf("signed by workflow %s/%s, not %s", repo, w.Path, signer)
	}
	if ref != "" && w.Ref != ref {
		return fmt.Errorf("built at %s, not %s", w.Ref, ref)
	}
	return nil
}
