package configs

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
)

// The keys as operators write them (docs/security.md) load into the principals, grants and
// tenants the gateway is given.
func TestAccessKeysLoad(t *testing.T) {
	path := writeFile(t, `
tls: {cert: c.pem, key: k.pem, client_ca: ca.pem}
auth:
  principals:
    - name: billing-app
      token_file: /etc/beangate/billing.tokens
      cert_subject: "CN=billing-app"
      tenant: billing
      grants:
        - tubes: ["billing-*"]
          allow: [put, reserve, inspect]
  anonymous:
    tenant: public
    grants: [{tubes: ["public-*"], allow: [put]}]
  tenants:
    - name: billing
      namespace: billing
      max_jobs: 100000
      max_bytes: 256MiB
      put_rate: 500
    - name: public
      namespace: public
`)
	cfg, _, err := Load(parsedFlags(t, "--config", path))
	require.NoError(t, err)
	a := cfg.Auth
	require.True(t, a.HasPrincipals())
	require.Equal(t, []Principal{{Name: "billing-app", TokenFile: "/etc/beangate/billing.tokens", CertSubject: "CN=billing-app",
		Tenant: "billing", Grants: []Grant{{Tubes: []string{"billing-*"}, Allow: []string{"put", "reserve", "inspect"}}}}}, a.Principals)
	require.Equal(t, []gateway.TubeGrant{{Tubes: []string{"billing-*"}, Allow: gateway.GrantPut | gateway.GrantReserve | gateway.GrantInspect}},
		GatewayGrants(a.Principals[0].Grants))
	require.Equal(t, "public", a.Anonymous.Tenant)
	require.Equal(t, uint64(256<<20), a.Tenants[0].Bytes())
	require.Equal(t, int64(100000), a.Tenants[0].MaxJobs)
	require.Equal(t, 500.0, a.Tenants[0].PutRate)
}

func TestAccessMistakesAreNamed(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"UnknownGrant", `auth: {principals: [{name: a, token_file: f, grants: [{tubes: ["*"], allow: [delete]}]}]}`,
			`auth.principals[0] ("a"): grants[0]: unknown grant "delete" (want put, reserve, inspect, manage)`},
		{"NoTubes", `auth: {principals: [{name: a, token_file: f, grants: [{allow: [put]}]}]}`,
			`grants[0]: tubes must name at least one tube or pattern`},
		{"OverlappingNames", `auth: {principals: [{name: a, token_file: f}, {name: a, token_file: g}]}`,
			`auth.principals[1] ("a"): overlapping principals: the name is given twice`},
		{"OverlappingSubjects", `
tls: {cert: c.pem, key: k.pem, client_ca: ca.pem}
auth: {principals: [{name: a, cert_subject: "CN=x"}, {name: b, cert_subject: "CN=x"}]}`,
			`overlapping principals: cert_subject "CN=x" is also principal "a"'s`},
		{"SubjectWithoutClientCA", `auth: {principals: [{name: a, cert_subject: "CN=x"}]}`,
			`cert_subject needs tls.client_ca`},
		{"NoCredential", `auth: {principals: [{name: a}]}`, `give token_file, cert_subject or both`},
		{"TenantWithoutNamespace", `auth: {tenants: [{name: t}]}`, `auth.tenants[0] ("t"): namespace must be set`},
		{"SharedNamespace", `auth: {tenants: [{name: t, namespace: n}, {name: u, namespace: n}]}`, `namespace "n" is also tenant "t"'s`},
		{"BadBytes", `auth: {tenants: [{name: t, namespace: n, max_bytes: 12XB}]}`, `max_bytes: "12XB"`},
		{"UnknownTenant", `auth: {principals: [{name: a, token_file: f, tenant: x}]}`, `tenant "x" is not in auth.tenants`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Load(parsedFlags(t, "--config", writeFile(t, c.yaml)))
			require.ErrorContains(t, err, c.want)
		})
	}
}
