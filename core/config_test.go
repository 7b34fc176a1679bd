package agilelimiter_test

import (
	"math"
	"strings"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

func TestConfigValidate(t *testing.T) {
	ok := agilelimiter.Config{MaxRate: 100}
	with := func(f func(c *agilelimiter.Config)) agilelimiter.Config {
		c := ok
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		cfg   agilelimiter.Config
		field string // "" means valid
	}{
		{"defaults", ok, ""},
		{"fixed rate", agilelimiter.Config{MinRate: 50, MaxRate: 50, InitialRate: 50}, ""},
		{"everything set", agilelimiter.Config{
			MinRate: 1, MaxRate: 100, InitialRate: 10, SLOTarget: time.Second, Anchor: agilelimiter.AnchorSLO,
			TickInterval: time.Second,
		}, ""},
		{"MaxRate missing", agilelimiter.Config{}, "MaxRate"},
		{"MaxRate negative", agilelimiter.Config{MaxRate: -1}, "MaxRate"},
		{"MaxRate NaN", agilelimiter.Config{MaxRate: math.NaN()}, "MaxRate"},
		{"MaxRate infinite", agilelimiter.Config{MaxRate: math.Inf(1)}, "MaxRate"},
		{"MinRate negative", with(func(c *agilelimiter.Config) { c.MinRate = -1 }), "MinRate"},
		{"MinRate above MaxRate", with(func(c *agilelimiter.Config) { c.MinRate = 101 }), "MinRate"},
		{"MinRate NaN", with(func(c *agilelimiter.Config) { c.MinRate = math.NaN() }), "MinRate"},
		{"InitialRate above MaxRate", with(func(c *agilelimiter.Config) { c.InitialRate = 200 }), "InitialRate"},
		{"InitialRate negative", with(func(c *agilelimiter.Config) { c.InitialRate = -5 }), "InitialRate"},
		{"negative SLOTarget", with(func(c *agilelimiter.Config) { c.SLOTarget = -time.Second }), "SLOTarget"},
		{"negative TickInterval", with(func(c *agilelimiter.Config) { c.TickInterval = -1 }), "TickInterval"},
		// A tick of 1ns spun a core (issue 14.6).
		{"TickInterval 1ns", with(func(c *agilelimiter.Config) { c.TickInterval = 1 }), "TickInterval"},
		{"TickInterval just under 1ms", with(func(c *agilelimiter.Config) { c.TickInterval = time.Millisecond - 1 }), "TickInterval"},
		{"TickInterval 1ms", with(func(c *agilelimiter.Config) { c.TickInterval = time.Millisecond }), ""},
		// Rates whose spacing overflows int64 failed open (issue 14.4).
		{"MinRate almost zero", with(func(c *agilelimiter.Config) { c.MinRate = 1e-12 }), "MinRate"},
		{"MaxRate almost zero", agilelimiter.Config{MaxRate: 1e-12}, "MaxRate"},
		{"InitialRate almost zero", with(func(c *agilelimiter.Config) { c.InitialRate = 1e-9 }), "InitialRate"},
		{"MinRate at the smallest", with(func(c *agilelimiter.Config) { c.MinRate = agilelimiter.MinAllowedRate }), ""},
		{"MaxRate at the smallest", agilelimiter.Config{MaxRate: agilelimiter.MinAllowedRate}, ""},
		{"AnchorSLO without SLOTarget", with(func(c *agilelimiter.Config) { c.Anchor = agilelimiter.AnchorSLO }), "SLOTarget"},
		{"unknown Anchor", with(func(c *agilelimiter.Config) { c.Anchor = 7 }), "Anchor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v; want nil", err)
				}
				agilelimiter.New(tc.cfg) // must not panic
				return
			}
			if err == nil || !strings.Contains(err.Error(), "Config."+tc.field) {
				t.Fatalf("Validate() = %v; want an error naming Config.%s", err, tc.field)
			}
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("New did not panic")
				}
				if e, ok := r.(error); !ok || e.Error() != err.Error() {
					t.Errorf("New panicked with %v; want the Validate error %v", r, err)
				}
			}()
			agilelimiter.New(tc.cfg)
		})
	}
}

func TestConcurrencyConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   agilelimiter.ConcurrencyConfig
		field string
	}{
		{"defaults", agilelimiter.ConcurrencyConfig{MaxLimit: 10}, ""},
		{"fixed", agilelimiter.ConcurrencyConfig{MinLimit: 5, MaxLimit: 5, InitialLimit: 5}, ""},
		{"MaxLimit missing", agilelimiter.ConcurrencyConfig{}, "MaxLimit"},
		{"MaxLimit negative", agilelimiter.ConcurrencyConfig{MaxLimit: -3}, "MaxLimit"},
		{"MinLimit negative", agilelimiter.ConcurrencyConfig{MaxLimit: 10, MinLimit: -1}, "MinLimit"},
		{"MinLimit above MaxLimit", agilelimiter.ConcurrencyConfig{MaxLimit: 10, MinLimit: 11}, "MinLimit"},
		{"InitialLimit above MaxLimit", agilelimiter.ConcurrencyConfig{MaxLimit: 10, InitialLimit: 11}, "InitialLimit"},
		{"InitialLimit below MinLimit", agilelimiter.ConcurrencyConfig{MaxLimit: 10, MinLimit: 4, InitialLimit: 2}, "InitialLimit"},
		{"InitialLimit negative", agilelimiter.ConcurrencyConfig{MaxLimit: 10, InitialLimit: -2}, "InitialLimit"},
		{"negative SLOTarget", agilelimiter.ConcurrencyConfig{MaxLimit: 10, SLOTarget: -1}, "SLOTarget"},
		{"negative TickInterval", agilelimiter.ConcurrencyConfig{MaxLimit: 10, TickInterval: -1}, "TickInterval"},
		{"TickInterval 1ns", agilelimiter.ConcurrencyConfig{MaxLimit: 10, TickInterval: 1}, "TickInterval"},
		// MaxLimit near MaxInt64 overflowed the slot count and refused
		// everything (issue 14.5).
		{"MaxLimit MaxInt64", agilelimiter.ConcurrencyConfig{MaxLimit: math.MaxInt64}, "MaxLimit"},
		{"MaxLimit past the bound", agilelimiter.ConcurrencyConfig{MaxLimit: agilelimiter.MaxAllowedLimit + 1}, "MaxLimit"},
		{"MaxLimit at the bound", agilelimiter.ConcurrencyConfig{MaxLimit: agilelimiter.MaxAllowedLimit}, ""},
		{"unknown Anchor", agilelimiter.ConcurrencyConfig{MaxLimit: 10, Anchor: 9}, "Anchor"},
		{"AnchorSLO without SLOTarget", agilelimiter.ConcurrencyConfig{MaxLimit: 10, Anchor: agilelimiter.AnchorSLO}, "SLOTarget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				agilelimiter.NewConcurrency(tc.cfg)
				return
			}
			if err == nil || !strings.Contains(err.Error(), "ConcurrencyConfig."+tc.field) {
				t.Fatalf("Validate() = %v; want an error naming ConcurrencyConfig.%s", err, tc.field)
			}
			defer func() {
				if recover() == nil {
					t.Fatal("NewConcurrency did not panic")
				}
			}()
			agilelimiter.NewConcurrency(tc.cfg)
		})
	}
}

// Zero values mean the documented defaults: InitialRate is MaxRate/8, at
// least MinRate; InitialLimit is half of MaxLimit, at least max(MinLimit, 1).
func TestInitialDefaults(t *testing.T) {
	for _, tc := range []struct {
		cfg  agilelimiter.Config
		want float64
	}{
		{agilelimiter.Config{MaxRate: 800}, 100},
		{agilelimiter.Config{MaxRate: 800, MinRate: 150}, 150},
		{agilelimiter.Config{MaxRate: 800, InitialRate: 20, MinRate: 50}, 50},
		{agilelimiter.Config{MaxRate: 0.5}, 0.5}, // MinRate defaults to min(1, MaxRate)
	} {
		if got := agilelimiter.New(tc.cfg).Rate(); got != tc.want {
			t.Errorf("%+v: initial rate %v; want %v", tc.cfg, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cfg  agilelimiter.ConcurrencyConfig
		want int
	}{
		{agilelimiter.ConcurrencyConfig{MaxLimit: 80}, 40},
		{agilelimiter.ConcurrencyConfig{MaxLimit: 4}, 2},
		{agilelimiter.ConcurrencyConfig{MaxLimit: 1}, 1},
		{agilelimiter.ConcurrencyConfig{MaxLimit: 80, MinLimit: 50}, 50},
	} {
		if got := agilelimiter.NewConcurrency(tc.cfg).Limit(); got != tc.want {
			t.Errorf("%+v: initial limit %v; want %v", tc.cfg, got, tc.want)
		}
	}
}

// At MaxAllowedLimit the semaphore still counts: the slot count never
// overflows into a limit that refuses everything (issue 14.5).
func TestLargestMaxLimitAdmits(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: agilelimiter.MaxAllowedLimit})
	if got := lim.Limit(); got != agilelimiter.MaxAllowedLimit/2 {
		t.Errorf("Limit() = %d; want %d", got, agilelimiter.MaxAllowedLimit/2)
	}
	if !lim.TryTake() {
		t.Fatal("TryTake refused at an empty limiter")
	}
	lim.Release()
}
