module github.com/agilelimiter/agilelimiter/resty

go 1.25.0

require (
	github.com/agilelimiter/agilelimiter/core v0.1.0
	github.com/agilelimiter/agilelimiter/nethttp v0.1.0
	github.com/go-resty/resty/v2 v2.17.2
)

require golang.org/x/net v0.43.0 // indirect
