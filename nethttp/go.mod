module github.com/agilelimiter/agilelimiter/nethttp

go 1.25.0

require github.com/agilelimiter/agilelimiter/core v0.1.0
