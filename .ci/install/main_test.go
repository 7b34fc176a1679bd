package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
	"github.com/go-resty/resty/v2"
)

// The service answers through the dependency while it has a slot, and
// refuses at once with 429 and Retry-After when it has none.
func TestService(t *testing.T) {
	release := make(chan struct{})
	dep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stock/slow" {
			<-release
		}
		io.WriteString(w, "in stock")
	}))
	defer dep.Close()

	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1})
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	srv := httptest.NewServer(newService(lim, agileresty.Limit(resty.New(), out), dep.URL))
	defer srv.Close()

	get := func(path string) (*http.Response, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := get("/orders/1"); resp.StatusCode != http.StatusOK || body != "order 1: in stock" {
		t.Fatalf("GET /orders/1: %d %q", resp.StatusCode, body)
	}

	slow := make(chan int)
	go func() { resp, _ := get("/orders/slow"); slow <- resp.StatusCode }()
	for lim.InFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	resp, body := get("/orders/2") // the only slot is held
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || body == "" {
		t.Errorf("GET /orders/2 at the limit: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(release)
	if code := <-slow; code != http.StatusOK {
		t.Errorf("the slow order: %d", code)
	}
}
