module github.com/agilelimiter/agilelimiter/fiber

go 1.26

require (
	github.com/agilelimiter/agilelimiter/core v0.0.0
	github.com/gofiber/fiber/v2 v2.52.15
)

replace github.com/agilelimiter/agilelimiter/core => ../core
