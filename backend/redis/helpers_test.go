package redis_test

import (
	beanredis "github.com/beangate/beangate/backend/redis"
)

// The test helpers live in export_test.go, so that in-package tests use them too.
var (
	redisURL     = beanredis.RedisURL
	requireRedis = beanredis.RequireRedis
	testClient   = beanredis.TestClient
	// newPrefix is a fresh namespace whose keys are deleted when the test ends.
	newPrefix = beanredis.NewPrefix
	// newBackend opens a Backend on the shared Redis under prefix; clock may be nil.
	newBackend = beanredis.NewTestBackend
)
