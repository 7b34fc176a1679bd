package agileresty_test

import (
	"net/http"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
)

// TestConformance runs the contract every outbound adapter keeps. The tests
// beside it are resty's own: retries, retry conditions and hooks, refusals
// and resty's transport settings.
func TestConformance(t *testing.T) {
	agiletest.Outbound{
		Name: "resty",
		Client: func(lim *agilelimiter.Limiter, rt http.RoundTripper) func(*http.Request) (*http.Response, error) {
			c := agileresty.Limit(newClient().SetTransport(rt), lim)
			return func(req *http.Request) (*http.Response, error) {
				r := c.R().SetContext(req.Context()).SetHeaderMultiValues(req.Header)
				if req.Body != nil {
					r.SetBody(req.Body)
				}
				resp, err := r.Execute(req.Method, req.URL.String())
				if resp == nil {
					return nil, err
				}
				return resp.RawResponse, err
			}
		},
	}.Run(t)
}
