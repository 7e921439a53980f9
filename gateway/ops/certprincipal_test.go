package ops_test

import (
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A client certificate whose subject names a principal is that principal from its first
// command, no auth line; another certificate the CA signed must still authenticate.
func TestClientCertificateSubjectIsAPrincipal(t *testing.T) {
	t.Parallel()
	clients := gatewaytest.NewCA(t, "client CA")
	access, err := gateway.NewAccess(gateway.AccessConfig{Principals: []gateway.Principal{
		{Name: "cert-worker", CertSubject: "CN=worker",
			Grants: []gateway.TubeGrant{{Tubes: []string{"jobs-*"}, Allow: gateway.GrantPut | gateway.GrantReserve}}},
		{Name: "token-app", TokenHashes: [][32]byte{gateway.HashToken("app-token")},
			Grants: []gateway.TubeGrant{{Tubes: []string{"*"}, Allow: gateway.GrantInspect}}},
	}})
	require.NoError(t, err)
	s := startTLSServer(t, clients, gateway.Config{Access: access})

	tc, err := s.dial(t, clients.ClientCert(t)) // CN=worker
	require.NoError(t, err)
	worker := gatewaytest.NewClient(t, tc)
	worker.Do("use jobs-a\r\nput 0 0 60 1\r\nx\r\n", "USING jobs-a\r\nINSERTED {n}\r\n")
	worker.Do("watch jobs-a\r\nignore default\r\nreserve-with-timeout 0\r\n", "WATCHING 2\r\nWATCHING 1\r\nRESERVED {n} 1\r\nx\r\n")
	worker.Do("use other\r\nput 0 0 60 1\r\nx\r\n", "USING other\r\nUNAUTHORIZED\r\n")

	certPEM, keyPEM, _ := clients.Issue(t, "stranger", true)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	tc, err = s.dial(t, pair)
	require.NoError(t, err)
	stranger := gatewaytest.NewClient(t, tc)
	stranger.Do("auth app-token\r\n", "AUTHENTICATED\r\n")
	stranger.Do("use jobs-a\r\nput 0 0 60 1\r\nx\r\n", "USING jobs-a\r\nUNAUTHORIZED\r\n")

	tc, err = s.dial(t, pair)
	require.NoError(t, err)
	unknown := gatewaytest.NewClient(t, tc)
	unknown.Do("list-tubes\r\n", "UNAUTHORIZED\r\n")
	unknown.ExpectClosed()
}
