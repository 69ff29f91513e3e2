package secrets

import (
	"path"
	"strings"
)

// The kinds of file that are secrets by name (Withheld).
const (
	KindDotenv      = "dotenv"      // .env, .env.*, *.env, .envrc
	KindPrivateKey  = "private-key" // SSH private keys, *.pem, *.key, *.ppk
	KindKeystore    = "keystore"    // *.p12, *.pfx, *.jks, *.keystore, *.kdbx
	KindCredentials = "credentials" // .npmrc, .pypirc, .netrc, cloud and tool credential files
)

var (
	// privateKeyNames are OpenSSH's default private key files (the .pub
	// beside each is public).
	privateKeyNames = names("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "identity")
	privateKeyExts  = names(".pem", ".key", ".ppk", ".p8")
	keystoreExts    = names(".p12", ".pfx", ".jks", ".keystore", ".bks", ".kdbx")
	// credentialNames are files tools keep tokens and passwords in,
	// wherever they sit.
	credentialNames = names(".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", ".git-credentials",
		".pgpass", ".htpasswd", ".dockercfg", ".s3cfg", ".boto", ".vault-token", ".terraformrc",
		"terraform.rc", "application_default_credentials.json", "credentials.db",
		"access_tokens.db", "accesstokens.json", "azureprofile.json", "kubeconfig")
	credentialExts = names(".tfstate")
	// credentialFiles are credential files known by their directory and
	// name (lower case): the cloud CLIs', Docker's, Kubernetes', cargo's
	// and gem's.
	credentialFiles = []string{".aws/credentials", ".aws/config", ".docker/config.json", ".kube/config",
		".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".config/gh/hosts.yml",
		".config/hub", ".azure/msal_token_cache.json", ".config/gcloud/credentials.db"}
)

func names(ns ...string) map[string]bool {
	m := make(map[string]bool, len(ns))
	for _, n := range ns {
		m[n] = true
	}
	return m
}

// Withheld returns the kind of secret a file at p (a slash-separated path
// relative to the repository's root) holds by its name, or "" when its
// name says nothing. Such a file is never sent to a model, whatever its
// content: a template such as .env.example is withheld too, since its
// values are real often enough. Names compare in lower case.
func Withheld(p string) string {
	lower := strings.ToLower(p)
	base := path.Base(lower)
	ext := path.Ext(base)
	switch {
	case base == ".env" || base == ".envrc" || strings.HasPrefix(base, ".env.") || ext == ".env":
		return KindDotenv
	case privateKeyNames[base] || privateKeyExts[ext]:
		return KindPrivateKey
	case keystoreExts[ext]:
		return KindKeystore
	case credentialNames[base] || credentialExts[ext] || strings.HasSuffix(base, ".tfstate.backup"):
		return KindCredentials
	}
	for _, f := range credentialFiles {
		if lower == f || strings.HasSuffix(lower, "/"+f) {
			return KindCredentials
		}
	}
	return ""
}
