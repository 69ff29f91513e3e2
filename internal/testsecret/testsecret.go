// Package testsecret makes secrets for tests at run time, so that no
// secret-shaped string is committed (a scanner would find it in warden's
// own sources, and a push protection might refuse it): a cloud key, tokens
// of well-known shapes, and private keys in PEM and OpenSSH armour, each
// derived from a seed.
//
// It is test support: only tests import it, and it imports no warden
// package.
package testsecret

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"math/rand/v2"
	"strings"
)

// chars draws n characters of alphabet from the seed.
func chars(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, 0x5ec2e7))
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

const (
	upper32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// AWSAccessKey is an access key ID of AWS's shape (AKIA and 16 base32
// characters).
func AWSAccessKey(seed uint64) string { return "AKIA" + chars(seed, 16, upper32) }

// GitHubToken is a personal access token of GitHub's classic shape (ghp_
// and 36 characters).
func GitHubToken(seed uint64) string { return "gh" + "p_" + chars(seed, 36, alnum) }

// SlackBotToken is a bot token of Slack's shape.
func SlackBotToken(seed uint64) string {
	return "xox" + "b-" + chars(seed, 11, "0123456789") + "-" + chars(seed+1, 12, "0123456789") + "-" + chars(seed+2, 24, alnum)
}

// ModelKey is a model provider key of OpenRouter's shape.
func ModelKey(seed uint64) string { return "sk-or-" + "v1-" + chars(seed, 64, "0123456789abcdef") }

// PKCS8Key is an ECDSA P-256 private key in PEM armour ("BEGIN PRIVATE
// KEY"), with its trailing newline. It is generated, so each call differs.
func PKCS8Key() string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// OpenSSHKey is an ed25519 private key in OpenSSH's armour, as ssh-keygen
// writes id_ed25519 (the body is the key's seed and public half in a
// minimal openssh-key-v1 layout), with its trailing newline.
func OpenSSHKey(seed uint64) string {
	priv := ed25519.NewKeyFromSeed([]byte(chars(seed, ed25519.SeedSize, alnum)))
	body := append([]byte("openssh-key-v1\x00"), priv...)
	body = append(body, []byte(chars(seed+1, 64, alnum))...)
	enc := base64.StdEncoding.EncodeToString(body)
	var b strings.Builder
	b.WriteString("-----BEGIN OPENSSH " + "PRIVATE KEY-----\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n-----END OPENSSH " + "PRIVATE KEY-----\n")
	return b.String()
}

// Password is a password of low entropy, a word and four digits, such as
// people pick: no scanner knows it by its shape, so only a file's name can
// say it is a secret.
func Password(seed uint64) string {
	words := []string{"sunshine", "dragon", "letmein", "monkey", "shadow", "harbour"}
	return words[seed%uint64(len(words))] + chars(seed, 4, "0123456789")
}
