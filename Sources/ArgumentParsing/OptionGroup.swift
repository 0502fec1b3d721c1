/// What an ``OptionGroup`` declares: an ``Option`` or an ``Argument``.
public protocol Declaration: Sendable {
    /// The name its value is kept under: `--name` for an option, `<name>` for an argument.
    var key: String { get }
    /// Adds its spec to a command's.
    func declare(in command: inout CommandSpec)
    /// Reads and checks its value from a parsed command.
    func value(in command: ParsedCommand) throws(UsageError) -> any Sendable
}

/// A command's options and arguments, declared as stored properties (``Option``, ``Argument``,
/// or a nested group such as a set of connection options shared by several commands).
///
/// The declaration order is the order in help and usage. Other stored properties (a setting
/// the group was made with) are not declarations and are left alone.
public protocol OptionGroup: Sendable {}

extension OptionGroup {
    /// Every declaration, in order, nested groups in place.
    public var declarations: [any Declaration] {
        Mirror(reflecting: self).children.flatMap { child -> [any Declaration] in
            if let declaration = child.value as? any Declaration { return [declaration] }
            if let group = child.value as? any OptionGroup { return group.declarations }
            return []
        }
    }
}

/// A group that declares nothing, for a command without options or arguments.
public struct NoOptions: OptionGroup {
    /// Creates the empty group.
    public init() {}
}
