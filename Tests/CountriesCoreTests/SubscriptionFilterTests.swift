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
        #expect(SubscriptionFilter.parse(Data([1]) + Data(prefix.utf8)) == .subscribe(Data(prefix.utf8)))
        #expect(SubscriptionFilter.parse(Data([0]) + Data(prefix.utf8)) == .cancel(Data(prefix.utf8)))
    }

    @Test(arguments: ["x", "country.changedx", "heartbeats", "Country.", "country.changed\0", "countr y"])
    func anythingElseIsIgnored(prefix: String) {
        #expect(!SubscriptionFilter.allows(Array(prefix.utf8)))
    }

    @Test func everyTopicIsHonouredAndNothingLonger() {
        for topic in Topic.allCases {
            #expect(SubscriptionFilter.allows(Array(topic.rawValue.utf8)))
        }
        #expect(SubscriptionFilter.maximumPrefixBytes == "country.changed".utf8.count)
        #expect(!SubscriptionFilter.allows([UInt8](repeating: UInt8(ascii: "c"), count: 1_000_000)))
    }

    @Test func messagesThatAreNotSubscriptionsAreToldApart() {
        #expect(SubscriptionFilter.parse(Data()) == .notASubscription)
        #expect(SubscriptionFilter.parse(Data([2]) + Data("country.".utf8)) == .notASubscription)
        #expect(SubscriptionFilter.parse(Data("country.".utf8)) == .notASubscription)
    }
}
