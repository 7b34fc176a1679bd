package sim

import (
	"context"
	"net/http"
	"syscall"
)

// HTTPExchange returns a simulated call as an HTTP client would see it, for
// verdicts written against net/http: an answer is a 200 whose X-Cache header
// says MISS (HIT when a cache answered), a timeout is
// context.DeadlineExceeded, and a refusal is ECONNREFUSED.
func HTTPExchange(st Status) (*http.Response, error) {
	switch st {
	case TimedOut:
		return nil, context.DeadlineExceeded
	case Refused:
		return nil, syscall.ECONNREFUSED
	}
	h := http.Header{"X-Cache": []string{"MISS"}}
	if st == Hit {
		h = http.Header{"X-Cache": []string{"HIT"}}
	}
	return &http.Response{StatusCode: http.StatusOK, Header: h}, nil
}
