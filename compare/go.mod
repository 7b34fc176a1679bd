module github.com/agilelimiter/agilelimiter/compare

go 1.26.0

require (
	github.com/agilelimiter/agilelimiter/core v0.1.0
	github.com/agilelimiter/agilelimiter/nethttp v0.1.0
	github.com/failsafe-go/failsafe-go v0.9.8
	go.uber.org/ratelimit v0.3.1
	golang.org/x/time v0.16.0
)

require (
	github.com/benbjohnson/clock v1.3.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
)
