// Package pki is the certificate authority of one envtest Environment:
// it signs the API server's serving certificate, every client certificate
// (the admin's and AddUser's) and the webhook server's serving pair, and
// makes the service account signing key.
//
// Guarantees:
//   - Keys are ECDSA P-256 (the service account key RSA 2048, which
//     kube-apiserver wants); certificates are valid from an hour ago for a
//     week.
//   - A certificate issued with hosts is a server certificate for those
//     DNS names and IP addresses; one without is a client certificate
//     whose common name is the user and whose organizations are the
//     groups, as the API server reads them.
//   - Everything is returned PEM-encoded; errors name the certificate.
package pki
