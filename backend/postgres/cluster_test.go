package postgres

import (
	"testing"

	"github.com/beangate/beangate/backend/postgres/pgtest"
)

type cluster = pgtest.Cluster

func privateCluster(t *testing.T) *cluster { return pgtest.PrivateCluster(t) }
