import Foundation

/// One line of the results: a figure, its baseline from the same run, and the target if any.
struct ResultRow: Codable, Sendable {
    var scenario: String
    var figure: String
    var value: Double
    var unit: String
    var baseline: String?
    var baselineValue: Double?
    var ratio: Double?
    /// The target in words, e.g. `≤ 1.2× floor`.
    var target: String?
    var met: Bool?
    var note: String?
}

/// Collects rows as scenarios finish.
struct Report {
    var rows: [ResultRow] = []
    var notes: [String] = []

    /// Adds a figure; `lowerIsBetter` decides which way a `limit` on the ratio (or the value) goes.
    mutating func add(
        _ scenario: String, _ figure: String, _ value: Double, _ unit: String,
        baseline: (name: String, value: Double)? = nil, ratioLimit: Double? = nil, valueLimit: Double? = nil,
        lowerIsBetter: Bool = true, target: String? = nil, extraCondition: Bool = true, note: String? = nil
    ) {
        var row = ResultRow(scenario: scenario, figure: figure, value: value, unit: unit)
        if let baseline, baseline.value > 0, value.isFinite {
            row.baseline = baseline.name
            row.baselineValue = baseline.value
            row.ratio = value / baseline.value
        }
        row.target = target
        if let ratioLimit, let ratio = row.ratio {
            row.met = (lowerIsBetter ? ratio <= ratioLimit : ratio >= ratioLimit) && extraCondition
        } else if let valueLimit {
            row.met = (lowerIsBetter ? value < valueLimit : value >= valueLimit) && extraCondition
        } else if target != nil {
            row.met = false
        }
        row.note = note
        rows.append(row)
    }

    /// The rows as a Markdown table (readable in a terminal too).
    func table() -> String {
        var lines = [
            "| scenario | figure | value | baseline (same run) | ratio | target | met? |",
            "| --- | --- | ---: | --- | ---: | --- | :---: |",
        ]
        for row in rows {
            let baseline = row.baseline.map { "\($0): \(format(row.baselineValue ?? 0, row.unit))" } ?? ""
            let ratio = row.ratio.map { String(format: "%.2f×", $0) } ?? ""
            let met = row.met.map { $0 ? "yes" : "**no**" } ?? ""
            var figure = row.figure
            if let note = row.note { figure += " (\(note))" }
            lines.append(
                "| \(row.scenario) | \(figure) | \(format(row.value, row.unit)) | \(baseline) | \(ratio) | \(row.target ?? "") | \(met) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    func format(_ value: Double, _ unit: String) -> String {
        guard value.isFinite else { return "n/a" }
        switch unit {
        case "µs":
            return value >= 10_000
                ? String(format: "%.1f ms", value / 1000) : String(format: "%.0f µs", value)
        case "ms": return String(format: "%.1f ms", value)
        case "/s": return String(format: "%.0f/s", value)
        case "B": return String(format: "%.0f B", value)
        case "MiB": return String(format: "%.1f MiB", value)
        case "fps": return String(format: "%.0f fps", value)
        case "%": return String(format: "%.2f %%", value)
        default: return String(format: "%.2f %@", value, unit)
        }
    }
}

/// One bar pair of the chart: p50 and p99 of a latency, in microseconds.
struct ChartBar {
    var label: String
    var p50: Double
    var p99: Double
    /// floor, countries or redis: picks the colour.
    var kind: String
}

/// A horizontal bar chart, log scale, p99 light behind p50 dark; self-contained SVG.
func chartSVG(_ bars: [ChartBar], title: String, subtitle: String) -> String {
    let labelWidth = 300.0
    let plotWidth = 560.0
    let rowHeight = 22.0
    let top = 64.0
    let height = top + Double(bars.count) * rowHeight + 56
    let width = labelWidth + plotWidth + 40
    let values = bars.flatMap { [$0.p50, $0.p99] }.filter { $0.isFinite && $0 > 0 }
    let low = pow(10, floor(log10(values.min() ?? 10)))
    let high = pow(10, ceil(log10(values.max() ?? 1000)))
    func x(_ value: Double) -> Double {
        let clamped = min(max(value, low), high)
        return labelWidth + plotWidth * (log10(clamped) - log10(low)) / (log10(high) - log10(low))
    }
    let colours = [
        "floor": ("#4d4d4d", "#bdbdbd"), "countries": ("#1f6fb2", "#9cc3e6"), "redis": ("#c0392b", "#f0a8a0"),
    ]
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
        viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="12" y="22" font-size="15" font-weight="bold">\(escape(title))</text>
        <text x="12" y="40" fill="#555">\(escape(subtitle))</text>

        """
    var decade = low
    while decade <= high {
        let position = x(decade)
        let label = decade >= 1000 ? "\(Int(decade / 1000)) ms" : "\(Int(decade)) µs"
        svg += """
            <line x1="\(position)" y1="\(top - 6)" x2="\(position)" y2="\(top + Double(bars.count) * rowHeight)" stroke="#ddd"/>
            <text x="\(position)" y="\(top + Double(bars.count) * rowHeight + 16)" text-anchor="middle" fill="#555">\(label)</text>

            """
        decade *= 10
    }
    for (index, bar) in bars.enumerated() {
        let y = top + Double(index) * rowHeight
        let (dark, light) = colours[bar.kind] ?? ("#333", "#ccc")
        svg += """
            <text x="\(labelWidth - 8)" y="\(y + 15)" text-anchor="end">\(escape(bar.label))</text>
            <rect x="\(labelWidth)" y="\(y + 3)" width="\(max(1, x(bar.p99) - labelWidth))" height="16" fill="\(light)"/>
            <rect x="\(labelWidth)" y="\(y + 7)" width="\(max(1, x(bar.p50) - labelWidth))" height="8" fill="\(dark)"/>

            """
    }
    let legendY = top + Double(bars.count) * rowHeight + 36
    svg += """
        <rect x="\(labelWidth)" y="\(legendY - 9)" width="14" height="8" fill="#1f6fb2"/>
        <text x="\(labelWidth + 18)" y="\(legendY)">p50 (dark)</text>
        <rect x="\(labelWidth + 100)" y="\(legendY - 11)" width="14" height="12" fill="#9cc3e6"/>
        <text x="\(labelWidth + 118)" y="\(legendY)">p99 (light)</text>
        <text x="\(labelWidth + 210)" y="\(legendY)" fill="#555">grey: bare libzmq floor · blue: countries · red: Redis</text>
        </svg>

        """
    return svg
}

private func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;")
}
