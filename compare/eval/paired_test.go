package eval

import (
	"math"
	"testing"
)

func TestSignTest(t *testing.T) {
	for _, tc := range []struct {
		k, m int
		want float64
	}{
		{0, 0, 1},
		{5, 5, 1},
		{1, 0, 1},           // one scenario says nothing
		{6, 0, 2.0 / 64},    // all six one way: 2 × ½⁶
		{9, 1, 22.0 / 1024}, // 2 × (1 + 10) / 2¹⁰
		{1, 9, 22.0 / 1024},
	} {
		if got := signTest(tc.k, tc.m); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("signTest(%d, %d) = %.6f; want %.6f", tc.k, tc.m, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	row := func(name string, of float64, meets bool) Row {
		return Row{Scenario: Scenario{Name: name}, Cells: []Cell{{OfOracle: of, Meets: meets}}}
	}
	a := Evaluation{Arms: []string{"agile"}, Rows: []Row{
		row("s1", 0.90, true),  // unchanged
		row("s2", 0.50, false), // doubles, still short: better
		row("s3", 0.85, true),  // ceases to meet, by 2%: worse
		row("s4", 0.70, false), // 3% up: neither
		row("s5", 0.80, true),  // only in a
	}}
	b := Evaluation{Arms: []string{"other", "agile"}, Rows: []Row{
		{Scenario: Scenario{Name: "s1"}, Cells: []Cell{{}, {OfOracle: 0.90, Meets: true}}},
		{Scenario: Scenario{Name: "s2"}, Cells: []Cell{{}, {OfOracle: 1.00, Meets: false}}},
		{Scenario: Scenario{Name: "s3"}, Cells: []Cell{{}, {OfOracle: 0.833, Meets: false}}},
		{Scenario: Scenario{Name: "s4"}, Cells: []Cell{{}, {OfOracle: 0.721, Meets: false}}},
	}}
	p := Compare(a, b, "agile")
	if p.N != 4 || p.Better != 1 || p.Worse != 1 {
		t.Fatalf("Compare: N %d, better %d, worse %d; want 4, 1, 1", p.N, p.Better, p.Worse)
	}
	want := math.Pow(1*2*(0.833/0.85)*(0.721/0.70), 0.25)
	if math.Abs(p.Ratio-want) > 1e-9 {
		t.Errorf("ratio %.6f; want the geometric mean of the four, %.6f", p.Ratio, want)
	}
	if p.P != 1 {
		t.Errorf("p %.3f; want 1 for one better and one worse", p.P)
	}
	if q := Compare(a, b, "missing"); !math.IsNaN(q.Ratio) || q.N != 0 {
		t.Errorf("an arm neither ran: %+v; want N 0 and a NaN ratio", q)
	}
}
