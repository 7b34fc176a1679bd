module github.com/agilelimiter/agilelimiter/echo

go 1.26

require (
	github.com/agilelimiter/agilelimiter/core v0.0.0
	github.com/labstack/echo/v4 v4.16.0
)

replace github.com/agilelimiter/agilelimiter/core => ../core
