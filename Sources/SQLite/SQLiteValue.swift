/// One SQLite value, in the five storage classes SQLite has.
public enum SQLiteValue: Equatable, Sendable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A 64-bit IEEE floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Raw bytes; an empty blob is distinct from `NULL`.
    case blob([UInt8])
}
