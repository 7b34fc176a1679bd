module github.com/agilelimiter/agilelimiter/core

go 1.25.0
