import CountriesCore
import Foundation

/// Representative wire sizes of a toggle, from the same encoders the service uses.
enum WireSizes {
    /// A toggle reply: `{"ok":true,"seq":…,"country":{…}}`.
    static let reply: Data = {
        var state = CountriesState(countries: SeedList.standard, seq: 12_345)
        let result = try! state.apply(.toggle(.index(0)), seed: SeedList.standard)
        return result.reply.encoded()
    }()

    /// An event body like the service publishes, with `seq`.
    static func event(seq: UInt64, index: Int = 0) -> Data {
        let country = SeedList.standard[index % SeedList.standard.count]
        return Event(seq: seq, kind: .changed(IndexedCountry(country, at: index))).encoded()
    }
}
