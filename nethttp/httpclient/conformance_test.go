package httpclient_test

import (
	"net/http"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

// TestConformance runs the contract every outbound adapter keeps; the tests
// beside it cover what is particular to the RoundTripper.
func TestConformance(t *testing.T) {
	agiletest.Outbound{
		Name: "httpclient",
		Client: func(lim *agilelimiter.Limiter, rt http.RoundTripper) func(*http.Request) (*http.Response, error) {
			c := &http.Client{Transport: httpclient.Wrap(rt, lim)}
			return c.Do
		},
	}.Run(t)
}
