extension JSONParser {
    /// The number at `position`, typed as the parser's documentation says.
    mutating func number() throws(Failure) -> JSONValue {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        // Integer part: 0, or a non-zero digit and more digits.
        guard let first = peek(), isDigit(first) else { throw .notJSON }
        position += 1
        if first != UInt8(ascii: "0") {
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        let integerEnd = position
        var fraction = integerEnd..<integerEnd
        var exponent = 0
        var integral = true
        if peek() == UInt8(ascii: ".") {
            integral = false
            position += 1
            guard let byte = peek(), isDigit(byte) else { throw .notJSON }
            let fractionStart = position
            while let byte = peek(), isDigit(byte) { position += 1 }
            fraction = fractionStart..<position
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            integral = false
            position += 1
            var exponentSign = 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                if sign == UInt8(ascii: "-") { exponentSign = -1 }
                position += 1
            }
            guard let byte = peek(), isDigit(byte) else { throw .notJSON }
            while let byte = peek(), isDigit(byte) {
                // Saturated: beyond a few hundred the Double check below refuses or it is zero.
                exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000)
                position += 1
            }
            exponent *= exponentSign
        }
        if let byte = peek(), isDigit(byte) { throw .notJSON }  // "01"
        let digits = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        let integerDigits = UnsafeRawBufferPointer(
            rebasing: bytes[(negative ? start + 1 : start)..<integerEnd])
        if integral, let exact = integer(integerDigits, negative: negative) { return exact }
        let text = String(decoding: digits, as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw .notJSON }
        // An integer literal too large for both integer types stays a Double, as before; a
        // fraction or an exponent is an integer only when its decimal value is one exactly.
        if !integral,
            let exact = exactInteger(
                integerDigits, UnsafeRawBufferPointer(rebasing: bytes[fraction]), exponent: exponent,
                negative: negative)
        {
            return exact
        }
        return .number(double)
    }

    /// `integer.fraction × 10^exponent` as `.integer` or `.unsigned` when that decimal value is
    /// an integer that fits, else nil. Exact: no `Double` in between, which would round
    /// `0.99999999999999999999` to 1 and `1e-400` to 0.
    private func exactInteger(
        _ integer: UnsafeRawBufferPointer, _ fraction: UnsafeRawBufferPointer, exponent: Int, negative: Bool
    ) -> JSONValue? {
        // The significant digits, without leading and trailing zeros, and their scale.
        var significant = [UInt8](integer) + [UInt8](fraction)
        var scale = exponent - fraction.count
        while let last = significant.last, last == UInt8(ascii: "0") {
            significant.removeLast()
            scale += 1
        }
        let leadingZeros = significant.prefix { $0 == UInt8(ascii: "0") }.count
        significant.removeFirst(leadingZeros)
        if significant.isEmpty { return .integer(0) }  // 0.0, -0e5: zero, whatever the exponent
        // A fraction is left, or there are more digits than 20 (UInt64.max has 20).
        guard scale >= 0, significant.count + scale <= 20 else { return nil }
        let padded = significant + [UInt8](repeating: UInt8(ascii: "0"), count: scale)
        return padded.withUnsafeBytes { self.integer($0, negative: negative) }
    }

    /// Decimal digits (no sign) as `.integer` or `.unsigned` when they fit, else nil.
    private func integer(_ digits: UnsafeRawBufferPointer, negative: Bool) -> JSONValue? {
        var magnitude: UInt64 = 0
        for byte in digits {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            magnitude = sum
        }
        if negative {
            if magnitude <= UInt64(Int64.max) { return .integer(-Int64(magnitude)) }
            if magnitude == UInt64(Int64.max) + 1 { return .integer(.min) }
            return nil
        }
        if magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
        return .unsigned(magnitude)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
