package pki_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/envtest/internal/pki"
)

func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

func TestIssue(t *testing.T) {
	ca, err := pki.NewAuthority()
	require.NoError(t, err)
	assert.True(t, ca.Cert.IsCA)
	assert.Equal(t, ca.Cert, parse(t, ca.CertPEM))
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	tests := []struct {
		name    string
		cn      string
		groups  []string
		hosts   []string
		usage   x509.ExtKeyUsage
		verify  string // DNS name or IP to verify a server certificate for
		wantIPs int
	}{
		{name: "client", cn: "alice", groups: []string{"devs", "system:masters"}, usage: x509.ExtKeyUsageClientAuth},
		{name: "server", cn: "kube-apiserver", hosts: []string{"127.0.0.1", "localhost"}, usage: x509.ExtKeyUsageServerAuth, verify: "localhost", wantIPs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certPEM, keyPEM, err := ca.Issue(tt.cn, tt.groups, tt.hosts)
			require.NoError(t, err)
			_, err = tls.X509KeyPair(certPEM, keyPEM)
			require.NoError(t, err, "the key belongs to the certificate")
			cert := parse(t, certPEM)
			assert.Equal(t, tt.cn, cert.Subject.CommonName)
			assert.Equal(t, tt.groups, cert.Subject.Organization)
			assert.Equal(t, []x509.ExtKeyUsage{tt.usage}, cert.ExtKeyUsage)
			assert.Len(t, cert.IPAddresses, tt.wantIPs)
			_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: tt.verify, KeyUsages: []x509.ExtKeyUsage{tt.usage}})
			assert.NoError(t, err)
		})
	}
}

func TestServiceAccountKey(t *testing.T) {
	keyPEM, err := pki.ServiceAccountKey()
	require.NoError(t, err)
	block, _ := pem.Decode(keyPEM)
	require.NotNil(t, block)
	assert.Equal(t, "RSA PRIVATE KEY", block.Type)
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	require.NoError(t, err)
	assert.Equal(t, 2048, key.N.BitLen())
}
