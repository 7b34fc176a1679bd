package agileredis_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileredis "github.com/agilelimiter/agilelimiter/redis"
	"github.com/redis/go-redis/v9"
)

// Every instance of a service that calls the payments API builds the same
// gate, on the same key: the provider allows 500 calls a second across the
// account, and about 20 instances share it.
func ExampleNew() {
	client := redis.NewClient(&redis.Options{
		Addr:                  "localhost:6379",
		ContextTimeoutEnabled: true, // a call the gate gives up on is cut short on the wire too
	})
	defer client.Close()

	gate, err := agileredis.New(agileredis.Config{
		Client:    client,
		Key:       "agilelimiter:payments-api",
		Rate:      500, // the provider's quota, across every instance
		Instances: 20,  // while Redis is down each instance paces at 500/20 = 25 calls/s
		Logger:    slog.Default(),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer gate.Close()

	// The limiter adapts to the API's latency as usual; the gate caps it at
	// what the quota leaves this instance.
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, Gate: gate})
	lim.Start()
	defer lim.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = lim.DoContext(ctx, func(ctx context.Context) error {
		return nil // call the payments API here
	})
	fmt.Println(err, gate.Stats().Granted+gate.Stats().FallbackGranted)
}
