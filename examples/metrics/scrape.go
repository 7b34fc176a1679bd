package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metrics is one scrape of a /metrics endpoint: the text it answered, that
// text parsed, and how long the scrape took.
type metrics struct {
	text string
	fams map[string]*dto.MetricFamily
	took time.Duration
}

// scrape GETs a /metrics endpoint with c, as a Prometheus server would, and
// parses the text exposition it answers.
func scrape(c *http.Client, url string) (metrics, error) {
	start := time.Now()
	resp, err := c.Get(url)
	if err != nil {
		return metrics{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return metrics{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return metrics{}, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return metrics{}, err
	}
	return metrics{text: string(body), fams: fams, took: time.Since(start)}, nil
}

// value returns the value of the series of family name whose labels include
// every name, value pair of labels ("limiter", "api", "reason", "overload"),
// and whether there is one.
func (m metrics) value(name string, labels ...string) (float64, bool) {
series:
	for _, s := range m.fams[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			if !hasLabel(s, labels[i], labels[i+1]) {
				continue series
			}
		}
		switch {
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func hasLabel(s *dto.Metric, name, value string) bool {
	for _, l := range s.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// lines returns the series lines of the text whose family is one of names,
// in the text's order.
func (m metrics) lines(names ...string) []string {
	var out []string
	for line := range strings.Lines(m.text) {
		line = strings.TrimSuffix(line, "\n")
		for _, name := range names {
			if strings.HasPrefix(line, name+"{") {
				out = append(out, line)
			}
		}
	}
	return out
}
