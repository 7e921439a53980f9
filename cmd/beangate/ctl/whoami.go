package ctl

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beangate/beangate/gateway"
)

// whoamiCmd shows the caller's own principal and grants, as the console's API sees the
// credentials ctl sends.
func whoamiCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "whoami", Short: "Your principal and its grants, as the server sees your credentials (--api)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, ok := o.apiClient()
			if !ok {
				return fmt.Errorf("whoami %w", errNoAPI)
			}
			var v gateway.PrincipalView
			if err := a.get(cmd.Context(), "/api/whoami", nil, &v); err != nil {
				return err
			}
			if o.json() {
				return o.printJSON(v)
			}
			fmt.Fprintf(o.stdout, "principal: %s\n", v.Name)
			if v.Tenant != "" {
				fmt.Fprintf(o.stdout, "tenant: %s\n", v.Tenant)
			}
			for _, g := range v.Grants {
				fmt.Fprintf(o.stdout, "grant: %s on %s\n", strings.Join(g.Allow, ", "), strings.Join(g.Tubes, " "))
			}
			return nil
		},
	}
}
