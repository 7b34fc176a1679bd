package agilegin

import (
	"hash/maphash"
	"sync"

	"github.com/gin-gonic/gin"
)

// admittedSet is the set of contexts that hold a slot from one Limit
// middleware. It exists for engine.HandleContext, which runs the global
// middleware again for a request already inside it. A mark in c.Keys would not
// survive: HandleContext resets the context, Keys included, before re-running
// the chain; the *gin.Context itself is the one thing that stays. The set is
// sharded so concurrent requests rarely meet on a lock, and its maps keep their
// buckets after deletes, so in steady state it allocates nothing.
type admittedSet struct {
	seed   maphash.Seed
	shards [16]admittedShard
}

type admittedShard struct {
	mu sync.Mutex
	m  map[*gin.Context]struct{}
}

func (s *admittedSet) init() {
	s.seed = maphash.MakeSeed()
	for i := range s.shards {
		s.shards[i].m = make(map[*gin.Context]struct{})
	}
}

func (s *admittedSet) shard(c *gin.Context) *admittedShard {
	return &s.shards[maphash.Comparable(s.seed, c)%uint64(len(s.shards))]
}

// enter adds c and returns the shard that holds it, for leave; it returns nil
// if c was already in the set.
func (s *admittedSet) enter(c *gin.Context) *admittedShard {
	sh := s.shard(c)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[c]; ok {
		return nil
	}
	sh.m[c] = struct{}{}
	return sh
}

// leave removes c, which enter put in sh.
func (sh *admittedShard) leave(c *gin.Context) {
	sh.mu.Lock()
	delete(sh.m, c)
	sh.mu.Unlock()
}
