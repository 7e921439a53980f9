package ops

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// tenantCollector exports each tenant's jobs (read from its store at scrape time) and what this
// gateway refused it: puts past a quota, commands past its grants. The main store is tenant "".
type tenantCollector struct {
	tenants func() ([]gateway.TenantFigures, []backend.Backend)
	timeout time.Duration
}

// NewTenantCollector collects the figures of tenants (a Server's Tenants); each store read is
// bounded by timeout.
func NewTenantCollector(tenants func() ([]gateway.TenantFigures, []backend.Backend), timeout time.Duration) prometheus.Collector {
	return &tenantCollector{tenants: tenants, timeout: timeout}
}

var (
	tenantJobsDesc       = desc("beangate_tenant_jobs", "Jobs in a tenant's store by state (tenant \"\": the main store).", "tenant", "state")
	tenantQuotaDesc      = desc("beangate_tenant_puts_refused_total", "Puts this gateway answered OUT_OF_MEMORY for a tenant's quota, by quota.", "tenant", "quota")
	tenantGrantRefusDesc = desc("beangate_tenant_commands_refused_total", "Commands this gateway refused for want of a grant, by the caller's tenant.", "tenant")
)

func (c *tenantCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{tenantJobsDesc, tenantQuotaDesc, tenantGrantRefusDesc} {
		ch <- d
	}
}

func (c *tenantCollector) Collect(ch chan<- prometheus.Metric) {
	figs, stores := c.tenants()
	for i, f := range figs {
		ch <- prometheus.MustNewConstMetric(tenantGrantRefusDesc, prometheus.CounterValue, float64(f.RefusedByGrant), f.Tenant)
		for quota, n := range f.RefusedByQuota {
			ch <- prometheus.MustNewConstMetric(tenantQuotaDesc, prometheus.CounterValue, float64(n), f.Tenant, quota)
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		st, err := stores[i].Stats(ctx)
		cancel()
		if err != nil {
			continue // beangate_store_up tells of the main store; a tenant's gap shows as missing series
		}
		for _, s := range []struct {
			state string
			n     uint64
		}{{"ready", st.ReadyJobs}, {"delayed", st.DelayedJobs}, {"reserved", st.ReservedJobs}, {"buried", st.BuriedJobs}} {
			ch <- prometheus.MustNewConstMetric(tenantJobsDesc, prometheus.GaugeValue, float64(s.n), f.Tenant, s.state)
		}
	}
}
