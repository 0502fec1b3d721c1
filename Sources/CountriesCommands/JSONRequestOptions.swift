import ArgumentParsing

/// The options of a query that takes nothing but `--json` and the connection (`list`, `count`,
/// `status`).
struct JSONRequestOptions: RequestOptions {
    let json = CommonOptions.json
    let connection: ConnectionOptions
}
