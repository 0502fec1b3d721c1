import ArgumentParsing
import CountriesCore
import CountriesWeb
import SystemSupport

/// The options of `countries relay`.
public struct RelayOptions: OptionGroup {
    public let from = CommonOptions.checkedEndpoints(
        Option(
            "from", value: "endpoint", help: "The event endpoint to follow (a service or a relay).",
            default: Defaults.eventsEndpoint, environment: "COUNTRIES_EVENTS"))
    public let bind = CommonOptions.checkedEndpoints(
        Option(
            "bind", value: "endpoint", help: "Where subscribers connect.", default: Defaults.relayEndpoint,
            environment: "COUNTRIES_BIND"))
    public let curveKey = Option(
        "curve-key", value: "file", help: "The relay's secret key file.", environment: "COUNTRIES_CURVE_KEY")
    public let serverKey = Option(
        "server-key", value: "file", help: "The upstream's public key file (for a CURVE upstream).",
        environment: "COUNTRIES_SERVER_KEY")
    public let allow = Option(
        repeating: "allow", value: "dir", help: "A directory of subscriber .pub keys to admit.",
        environment: "COUNTRIES_ALLOW")
    public let allowRead = Option(
        repeating: "allow-read", value: "dir", help: "Same as --allow (a relay only reads).",
        environment: "COUNTRIES_ALLOW_READ")
    public let insecure = Option(
        flag: "insecure", help: "Allow a plaintext --bind that is not loopback.",
        environment: "COUNTRIES_INSECURE")
    public let logLevel = CommonOptions.logLevel
    public let metrics = CommonOptions.metrics

    public init() {}
}
