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

// enter adds c and reports whether it was absent.
func (s *admittedSet) enter(c *gin.Context) bool {
	sh := s.shard(c)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[c]; ok {
		return false
	}
	sh.m[c] = struct{}{}
	return true
}

// leave removes c.
func (s *admittedSet) leave(c *gin.Context) {
	sh := s.shard(c)
	sh.mu.Lock()
	delete(sh.m, c)
	sh.mu.Unlock()
}
