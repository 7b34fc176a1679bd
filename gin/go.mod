module github.com/agilelimiter/agilelimiter/gin

go 1.26

require (
	github.com/agilelimiter/agilelimiter/core v0.0.0
	github.com/gin-gonic/gin v1.12.0
)

replace github.com/agilelimiter/agilelimiter/core => ../core
