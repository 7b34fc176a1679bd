package httpclient_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

func Example() {
	dependency := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	defer dependency.Close()

	lim := agilelimiter.New(agilelimiter.Config{
		MaxRate:   200,                    // what we promise the dependency at most
		SLOTarget: 250 * time.Millisecond, // lets an outage from the first call drive the rate down
	})
	lim.Start()
	defer lim.Stop()
	client := &http.Client{Transport: httpclient.Wrap(nil, lim), Timeout: 5 * time.Second}

	for range 3 {
		resp, err := client.Get(dependency.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	fmt.Println("admitted:", lim.Stats().Admitted)
	// Output:
	// 200 OK
	// 200 OK
	// 200 OK
	// admitted: 3
}

func ExampleRetryAfter() {
	resp := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}}
	resp.Header.Set("Retry-After", "30")
	d, ok := httpclient.RetryAfter(resp)
	fmt.Println(d, ok)

	resp.Header.Set("Retry-After", "tomorrow-ish")
	d, ok = httpclient.RetryAfter(resp)
	fmt.Println(d, ok)
	// Output:
	// 30s true
	// 0s false
}

// A verdict that treats the dependency's 500s for one expensive endpoint as
// capacity refusals, and leaves the rest to the shared policy.
func ExampleWithVerdict() {
	verdict := func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome {
		if err == nil && resp.StatusCode == http.StatusInternalServerError && resp.Request.URL.Path == "/report" {
			return agilelimiter.Unreachable
		}
		return httpclient.DefaultVerdict(resp, err, d)
	}
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 50})
	rt := httpclient.Wrap(http.DefaultTransport, lim, httpclient.WithVerdict(verdict))
	_ = &http.Client{Transport: rt}
	fmt.Println(verdict(&http.Response{StatusCode: 200, Header: http.Header{"X-Cache": {"HIT"}}}, nil, 0))
	// Output: Aborted
}
