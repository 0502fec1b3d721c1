import ArgumentParsing

/// The options of `countries keygen`.
public struct KeygenOptions: OptionGroup {
    public let name = Argument(
        "name", help: "The file name to write, without extension (may include a directory).")
    public let force = Option(flag: "force", help: "Overwrite existing key files.")

    public init() {}
}
