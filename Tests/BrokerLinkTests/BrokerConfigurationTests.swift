import Testing

@testable import BrokerLink

@Suite struct BrokerConfigurationTests {
    @Test func parsesURLs() throws {
        let plain = try BrokerConfiguration(url: "mqtt://broker.example", clientID: "c")
        #expect(plain.host == "broker.example" && plain.port == 1883 && !plain.usesTLS)
        let tls = try BrokerConfiguration(url: "mqtts://10.0.0.1", clientID: "c")
        #expect(tls.host == "10.0.0.1" && tls.port == 8883 && tls.usesTLS)
        let v6 = try BrokerConfiguration(url: "mqtt://[::1]:1884", clientID: "c")
        #expect(v6.host == "::1" && v6.port == 1884)
        let withSlash = try BrokerConfiguration(url: "mqtts://h:9000/", clientID: "c")
        #expect(withSlash.port == 9000 && withSlash.host == "h")
    }

    @Test(arguments: [
        "http://h", "mqtt://", "mqtt://h:0", "mqtt://h:65536", "mqtt://h:x", "mqtt://user@h", "mqtt://h/path",
        "mqtt://[::1", "mqtt://[::1]x", "mqtt://h:1883:1", "mqtt://h?x", "MQTT://h", "mqtt://h:+1",
    ])
    func rejectsBadURLs(url: String) {
        #expect(throws: BrokerError.self) { try BrokerConfiguration(url: url, clientID: "c") }
    }

    @Test func rejectsBadSettings() throws {
        #expect(throws: BrokerError.self) { try BrokerConfiguration(url: "mqtt://h", clientID: "") }
        var configuration = try BrokerConfiguration(url: "mqtt://h", clientID: "c")
        configuration.keepAlive = 2
        #expect(throws: BrokerError.self) { try configuration.validate() }
        configuration.keepAlive = 30
        configuration.caFile = "/etc/ssl/certs/ca-certificates.crt"
        #expect(throws: BrokerError.self) { try configuration.validate() }
    }
}
