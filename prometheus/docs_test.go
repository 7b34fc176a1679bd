package agileprom_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileprom "github.com/agilelimiter/agilelimiter/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// Every metric docs/observability.md and the Grafana dashboard name is one
// the collector exports, and every one it exports is in the docs: a renamed
// metric cannot leave a panel or an alert querying nothing.
func TestDocsNameExportedMetrics(t *testing.T) {
	c := agileprom.New()
	c.AddLimiter("out", agilelimiter.New(agilelimiter.Config{MaxRate: 10}))
	c.AddConcurrency("in", agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10}))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, f := range families {
		exported = append(exported, f.GetName())
	}

	name := regexp.MustCompile(`agilelimiter_[a-z0-9_]*[a-z0-9]`)
	for _, doc := range []string{"observability.md", filepath.Join("grafana", "agilelimiter.json")} {
		b, err := os.ReadFile(filepath.Join("..", "docs", doc))
		if os.IsNotExist(err) {
			t.Skipf("docs/%s not found: the module is outside its repository", doc)
		}
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		for _, m := range name.FindAllString(string(b), -1) {
			named[m] = true
			if !slices.Contains(exported, m) {
				t.Errorf("docs/%s names %s, which the collector does not export", doc, m)
			}
		}
		if doc == "observability.md" {
			for _, m := range exported {
				if !named[m] {
					t.Errorf("the collector exports %s, which docs/%s does not list", m, doc)
				}
			}
		}
	}
}
