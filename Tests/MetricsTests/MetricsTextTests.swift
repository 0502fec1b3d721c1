import Metrics
import Testing

@Suite struct MetricsTextTests {
    @Test func labelValuesAreEscapedAndReadBack() throws {
        var text = MetricsText()
        let awkward = "a \"quoted\" back\\slash\nand a new line"
        text.counter("x_total", help: "help with \\ and\nline", labels: ["name": awkward], 3)
        let encoded = text.encoded
        #expect(encoded.contains(#"x_total{name="a \"quoted\" back\\slash\nand a new line"} 3"#))
        #expect(encoded.contains(#"# HELP x_total help with \\ and\nline"#))
        let parsed = try ExpositionParser(encoded)
        #expect(parsed.value("x_total", ["name": awkward]) == 3)
    }

    @Test func familiesSamplesAndLabelsAreOrdered() {
        var text = MetricsText()
        text.gauge("b_gauge", help: "B.", labels: ["z": "1", "a": "2"], 1)
        text.counter("a_total", help: "A.", labels: ["op": "toggle"], 2)
        text.counter("a_total", help: "A.", labels: ["op": "list"], 5)
        #expect(
            text.encoded == """
                # HELP a_total A.
                # TYPE a_total counter
                a_total{op="list"} 5
                a_total{op="toggle"} 2
                # HELP b_gauge B.
                # TYPE b_gauge gauge
                b_gauge{a="2",z="1"} 1

                """)
    }

    @Test func histogramBucketsAreCumulative() throws {
        var histogram = Histogram(upperBounds: [0.5, 0.1, 1])
        for value in [0.05, 0.1, 0.3, 0.7, 0.9, 4] { histogram.observe(value) }
        var text = MetricsText()
        text.histogram("latency_seconds", help: "L.", histogram)
        #expect(
            text.encoded == """
                # HELP latency_seconds L.
                # TYPE latency_seconds histogram
                latency_seconds_bucket{le="0.1"} 2
                latency_seconds_bucket{le="0.5"} 3
                latency_seconds_bucket{le="1"} 5
                latency_seconds_bucket{le="+Inf"} 6
                latency_seconds_sum 6.05
                latency_seconds_count 6

                """)
        let parsed = try ExpositionParser(text.encoded)
        #expect(parsed.kinds["latency_seconds"] == .histogram)
        #expect(parsed.value("latency_seconds_bucket", ["le": "+Inf"]) == 6)
    }

    @Test func valuesAreFormattedAsPrometheusReadsThem() {
        #expect(MetricsText.format(3) == "3")
        #expect(MetricsText.format(0.25) == "0.25")
        #expect(MetricsText.format(.infinity) == "+Inf")
        #expect(MetricsText.format(-.infinity) == "-Inf")
        #expect(MetricsText.format(.nan) == "NaN")
    }

    @Test func namesAreChecked() {
        #expect(MetricsText.isMetricName("countries_requests_total"))
        #expect(MetricsText.isMetricName("a:b"))
        #expect(!MetricsText.isMetricName("9lives"))
        #expect(!MetricsText.isMetricName("a-b"))
        #expect(!MetricsText.isLabelName("a:b"))
        #expect(!MetricsText.isLabelName(""))
    }

    @Test(arguments: [
        ("x_total 1\n", "before any # TYPE"),
        ("# TYPE x counter\n", "does not end in _total"),
        ("# TYPE x_total counter\nx_total -1\n", "is -1"),
        ("# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"1\"} 2\n", "twice"),
        ("# TYPE g gauge\ng{a=\"\\t\"} 1\n", "unknown escape"),
        ("# TYPE g gauge\ng one\n", "not a number"),
        ("# TYPE g gauge\ng 1", "newline"),
        ("# TYPE g gauge\n# TYPE g gauge\n", "second # TYPE"),
        ("# random comment\n", "neither"),
        (
            "# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"2\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_count 3\n",
            "not cumulative"
        ),
        ("# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_count 3\n", "+Inf"),
        ("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_count 4\n", "_count differs"),
    ])
    func strictParserRefuses(text: String, reason: String) {
        #expect {
            try ExpositionParser(text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func emptyHistogramHasEveryBucket() throws {
        var text = MetricsText()
        text.histogram("h", help: "H.", Histogram(upperBounds: [1, 2]))
        let parsed = try ExpositionParser(text.encoded)
        #expect(parsed.value("h_bucket", ["le": "+Inf"]) == 0)
        #expect(parsed.value("h_count") == 0)
        #expect(parsed.samples.count == 5)
    }
}
