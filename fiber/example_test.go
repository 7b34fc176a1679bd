package agilefiber_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	fiberrecover "github.com/gofiber/fiber/v2/middleware/recover"
)

func ExampleLimit() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100})
	lim.Start()
	defer lim.Stop()

	app := fiber.New()
	app.Use(fiberrecover.New()) // outermost: fasthttp does not recover panics
	app.Use(agilefiber.Limit(lim))
	app.Get("/hello", func(c *fiber.Ctx) error { return c.SendString("hello") })

	resp, err := app.Test(httptest.NewRequest("GET", "/hello", nil), -1)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode)
	// Output: 200
}

// A full limiter answers 429 with Retry-After, without running the handler.
func ExampleLimit_refusal() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1})
	lim.TryTake() // another request holds the only slot
	defer lim.Release()

	app := fiber.New()
	app.Use(agilefiber.Limit(lim, agilefiber.WithRetryAfter(2*time.Second)))
	app.Get("/hello", func(c *fiber.Ctx) error { return c.SendString("hello") })

	resp, err := app.Test(httptest.NewRequest("GET", "/hello", nil), -1)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	// Output: 429 2
}

// A verdict that keeps health checks out of the controller's view and leaves
// the rest to the shared policy. Anything it keeps from the Exchange must be
// copied: fiber reuses the buffers behind it.
func ExampleWithVerdict() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100})
	var last string
	verdict := func(e agilelimiter.Exchange) agilelimiter.Outcome {
		last = strings.Clone(e.Route)
		if e.Route == "/healthz" {
			return agilelimiter.Aborted
		}
		return agilelimiter.DefaultServerVerdict(e)
	}

	app := fiber.New()
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(verdict)))
	app.Get("/users/:id", func(*fiber.Ctx) error { return fiber.ErrServiceUnavailable })

	resp, err := app.Test(httptest.NewRequest("GET", "/users/42", nil), -1)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, last)
	// Output: 503 /users/:id
}
