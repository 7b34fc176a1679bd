module github.com/agilelimiter/agilelimiter/redis

go 1.25.0

require (
	github.com/agilelimiter/agilelimiter/core v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
