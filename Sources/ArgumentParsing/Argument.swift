/// One positional argument of a command, declared once: its spec and how its value is read.
///
/// `Argument<String>` is required, `Argument<[String]>` takes every remaining value (at least
/// one). Read it through ``ParsedValues`` by key path, as an ``Option``.
public struct Argument<Value: Sendable>: Declaration {
    /// What the parser and the help see.
    public let spec: ArgumentSpec
    private let read: @Sendable (ParsedCommand) throws(UsageError) -> Value

    /// An argument read by `read`, which may check the value and throw a usage error.
    public init(
        _ spec: ArgumentSpec, read: @escaping @Sendable (ParsedCommand) throws(UsageError) -> Value
    ) {
        self.spec = spec
        self.read = read
    }

    /// The same argument, its value converted or checked by `transform`.
    public func map<Converted>(
        _ transform: @escaping @Sendable (Value, ParsedCommand) throws(UsageError) -> Converted
    ) -> Argument<Converted> {
        let read = self.read
        return Argument<Converted>(spec) { (command) throws(UsageError) in
            try transform(read(command), command)
        }
    }

    public var key: String { "<\(spec.name)>" }

    public func declare(in command: inout CommandSpec) {
        command.arguments.append(spec)
    }

    public func value(in command: ParsedCommand) throws(UsageError) -> any Sendable {
        try read(command)
    }
}

extension Argument where Value == String {
    /// A required argument.
    public init(_ name: String, help: String) {
        self.init(ArgumentSpec(name: name, help: help)) { (command) throws(UsageError) in
            // The parser has already refused a command line without it.
            guard let value = command.argument(name) else {
                throw command.usageError("Missing expected argument '<\(name)>'")
            }
            return value
        }
    }
}

extension Argument where Value == [String] {
    /// A required argument that takes every remaining positional value.
    public init(repeating name: String, help: String) {
        self.init(ArgumentSpec(name: name, help: help, isRepeating: true)) { command in
            command.arguments(name)
        }
    }
}
