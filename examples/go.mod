module github.com/agilelimiter/agilelimiter/examples

go 1.26

require (
	github.com/agilelimiter/agilelimiter/core v0.0.0
	github.com/agilelimiter/agilelimiter/echo v0.0.0
	github.com/agilelimiter/agilelimiter/fiber v0.0.0
	github.com/agilelimiter/agilelimiter/nethttp v0.0.0-00010101000000-000000000000
	github.com/gofiber/fiber/v2 v2.52.15
	github.com/labstack/echo/v4 v4.16.0
)

require (
	github.com/andybalholm/brotli v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.17.9 // indirect
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.51.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	github.com/valyala/tcplisten v1.0.0 // indirect
	golang.org/x/crypto v0.53.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/text v0.40.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace (
	github.com/agilelimiter/agilelimiter/core => ../core
	github.com/agilelimiter/agilelimiter/echo => ../echo
	github.com/agilelimiter/agilelimiter/fiber => ../fiber
	github.com/agilelimiter/agilelimiter/gin => ../gin
	github.com/agilelimiter/agilelimiter/nethttp => ../nethttp
	github.com/agilelimiter/agilelimiter/resty => ../resty
)
