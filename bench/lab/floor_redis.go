package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/internal/storeprobe"
)

//go:embed floor_redis.lua
var floorRedisLua string

// redisFloor runs floor_redis.lua, one EVALSHA per round trip, on keys of its own.
type redisFloor struct {
	c      *redis.Client
	script *redis.Script
	base   string // the hash tag of every key, its own per run
	keys   []string
	args   []any // the body, then the round trip's operations
}

func openRedisFloor(ctx context.Context, url string, body int) (*redisFloor, error) {
	c, err := storeprobe.OpenRedisNode(ctx, url)
	if err != nil {
		return nil, err
	}
	var tag [4]byte
	_, _ = rand.Read(tag[:])
	base := "{beangate-floor-" + hex.EncodeToString(tag[:]) + "}"
	f := &redisFloor{c: c, script: redis.NewScript(floorRedisLua), base: base,
		keys: []string{base + ":ids", base + ":ready", base + ":reserved", base + ":j:"},
		args: []any{strings.Repeat("x", body)}}
	if err := f.script.Load(ctx, c).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return f, nil
}

func (f *redisFloor) roundTrip(ctx context.Context, ops []byte) error {
	args := f.args[:1]
	for _, op := range ops {
		args = append(args, string(op))
	}
	f.args = args
	replies, err := f.script.EvalSha(ctx, f.c, f.keys, args...).Slice()
	if err != nil {
		return err
	}
	if len(replies) != len(ops) {
		return fmt.Errorf("floor: %d operations answered with %d replies", len(ops), len(replies))
	}
	return nil
}

// settle empties the floor's keys, so that every round starts from the same empty queue.
func (f *redisFloor) settle(ctx context.Context) error {
	return f.clear(ctx)
}

func (f *redisFloor) clear(ctx context.Context) error {
	iter := f.c.Scan(ctx, 0, f.base+":*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := f.c.Del(ctx, iter.Val()).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}

func (f *redisFloor) Close() {
	_ = f.clear(context.Background())
	_ = f.c.Close()
}
