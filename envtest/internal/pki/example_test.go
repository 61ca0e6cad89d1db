package pki_test

import (
	"crypto/tls"
	"fmt"

	"github.com/kubeloop/kubeloop/envtest/internal/pki"
)

// A CA issues a client certificate whose subject the API server reads as
// user and groups.
func ExampleAuthority_Issue() {
	ca, err := pki.NewAuthority()
	if err != nil {
		fmt.Println(err)
		return
	}
	certPEM, keyPEM, err := ca.Issue("alice", []string{"devs"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pair.Leaf.Subject.CommonName, pair.Leaf.Subject.Organization, pair.Leaf.Issuer.CommonName)
	// Output: alice [devs] kubeloop-envtest-ca
}
