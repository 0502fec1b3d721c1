import CountriesCore
import Foundation
import Testing

/// The one rule the service's and the relay's event sockets share for subscriptions.
@Suite struct SubscriptionFilterTests {
    @Test(arguments: [
        "", "c", "country.", "country.changed", "countries", "countries.reset", "heart", "heartbeat",
    ])
    func prefixesOfTopicsAreHonoured(prefix: String) {
        #expect(SubscriptionFilter.allows(Array(prefix.utf8)))
        #expect(SubscriptionFilter.decide(Data([1]) + Data(prefix.utf8)) == .subscribe(Data(prefix.utf8)))
        #expect(SubscriptionFilter.decide(Data([0]) + Data(prefix.utf8)) == .unsubscribe(Data(prefix.utf8)))
    }

    @Test(arguments: ["x", "country.changedx", "heartbeats", "Country.", "country.changed\0", "countr y"])
    func anythingElseIsIgnored(prefix: String) {
        #expect(!SubscriptionFilter.allows(Array(prefix.utf8)))
        #expect(SubscriptionFilter.decide(Data([1]) + Data(prefix.utf8)) == .ignore)
        #expect(SubscriptionFilter.decide(Data([0]) + Data(prefix.utf8)) == .ignore)
    }

    @Test func everyTopicIsHonouredAndNothingLonger() {
        for topic in Topic.allCases {
            #expect(SubscriptionFilter.allows(Array(topic.rawValue.utf8)))
        }
        #expect(SubscriptionFilter.maximumPrefixBytes == "country.changed".utf8.count)
        let huge = Data([1]) + Data(repeating: UInt8(ascii: "c"), count: 1_000_000)
        #expect(SubscriptionFilter.decide(huge) == .ignore)
    }

    @Test func messagesThatAreNotSubscriptionsAreIgnored() {
        #expect(SubscriptionFilter.decide(Data()) == .ignore)
        #expect(SubscriptionFilter.decide(Data([2]) + Data("country.".utf8)) == .ignore)
        #expect(SubscriptionFilter.decide(Data("country.".utf8)) == .ignore)
    }
}
