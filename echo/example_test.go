package agileecho_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileecho "github.com/agilelimiter/agilelimiter/echo"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

func Example() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64})
	lim.Start()
	defer lim.Stop()

	e := echo.New()
	e.Use(middleware.Recover())
	e.Use(agileecho.Limit(lim))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })
	e.GET("/fail", func(c echo.Context) error { return echo.NewHTTPError(http.StatusServiceUnavailable) })

	for _, path := range []string{"/hello", "/fail"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, rec.Code)
	}
	// Output:
	// /hello 200
	// /fail 503
}

// A full limiter refuses with 429 and a Retry-After header, without running
// the handler.
func ExampleWithRetryAfter() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	e := echo.New()
	e.Use(agileecho.Limit(lim, agileecho.WithRetryAfter(5*time.Second)))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "ran") })

	lim.TryTake() // another request holds the only slot
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	// Output: 429 5
}

// An application whose error handler renders every error as JSON renders
// refusals too, with WithHTTPError. The Retry-After header is already set.
func ExampleWithHTTPError() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		code, msg := http.StatusInternalServerError, any(http.StatusText(http.StatusInternalServerError))
		if he, ok := err.(*echo.HTTPError); ok {
			code, msg = he.Code, he.Message
		}
		_ = c.JSON(code, map[string]any{"error": msg})
	}
	e.Use(agileecho.Limit(lim, agileecho.WithHTTPError()))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "ran") })

	lim.TryTake() // another request holds the only slot
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	fmt.Print(rec.Body.String())
	// Output:
	// 429 1
	// {"error":"429 too many requests: concurrency limit reached, retry after 1s"}
}

// A verdict that keeps a health check out of the controller's samples, and
// leaves every other request to the shared policy.
func ExampleWithVerdict() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64})
	verdict := func(x agilelimiter.Exchange) agilelimiter.Outcome {
		o := agilelimiter.DefaultServerVerdict(x)
		if x.Route == "/healthz" {
			o = agilelimiter.Aborted
		}
		fmt.Println(x.Method, x.Route, x.Status, o)
		return o
	}
	e := echo.New()
	e.Use(agileecho.Limit(lim, agileecho.WithVerdict(verdict)))
	e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.GET("/users/:id", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("id")) })

	for _, path := range []string{"/healthz", "/users/7"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	// Output:
	// GET /healthz 200 Aborted
	// GET /users/:id 200 Reached
}

// Health checks skip the limiter entirely: they answer while the service is
// saturated.
func ExampleWithSkipper() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	e := echo.New()
	e.Use(agileecho.Limit(lim, agileecho.WithSkipper(func(c echo.Context) bool {
		return c.Path() == "/healthz"
	})))
	ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
	e.GET("/healthz", ok)
	e.GET("/work", ok)

	lim.TryTake() // the service is saturated
	for _, path := range []string{"/healthz", "/work"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, rec.Code)
	}
	// Output:
	// /healthz 200
	// /work 429
}
