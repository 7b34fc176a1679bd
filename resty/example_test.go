package agileresty_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
	"github.com/go-resty/resty/v2"
)

func ExampleLimit() {
	var calls atomic.Int32
	dependency := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway) // fails once, then recovers
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer dependency.Close()

	lim := agilelimiter.New(agilelimiter.Config{
		MaxRate:   100,                    // what we promise the dependency at most
		SLOTarget: 250 * time.Millisecond, // lets an outage from the first call drive the rate down
	})
	lim.Start()
	defer lim.Stop()

	// resty's own retry condition needs no guard: a refused attempt (no slot
	// before the request's deadline) ends the request before any condition
	// runs.
	client := resty.New().
		SetRetryCount(2).
		SetRetryWaitTime(10 * time.Millisecond).
		AddRetryAfterErrorCondition()
	agileresty.Limit(client, lim)

	resp, err := client.R().Get(dependency.URL)
	if agileresty.Refused(err) {
		fmt.Println("no slot in time:", err)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode(), resp.String())
	fmt.Println("attempts admitted:", lim.Stats().Admitted)
	// Output:
	// 200 hello
	// attempts admitted: 2
}

// Proxy and TLS settings go through Transport once Limit has wrapped the
// client's *http.Transport; resty's own SetProxy would only log an error.
func ExampleTransport() {
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	client := agileresty.Limit(resty.New(), lim)

	tr, err := agileresty.Transport(client)
	if err != nil {
		fmt.Println(err)
		return
	}
	tr.Proxy = nil // or http.ProxyURL(u); tr.TLSClientConfig = cfg
	_, err = client.Transport()
	fmt.Println("resty sees an *http.Transport:", err == nil)
	// Output: resty sees an *http.Transport: false
}
