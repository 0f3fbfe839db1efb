import BrokerLink
import Foundation
import SystemdBusTesting
import Testing

@Suite struct PasswordFileTests {
    @Test func thePasswordIsTheFirstLineAndAnUnreadableFileIsAConfigurationError() throws {
        let directory = try TemporaryDirectory(prefix: "password-file")
        defer { directory.remove() }
        let cases = ["secret\n": "secret", "secret": "secret", "secret\nsecond line\n": "secret", "\nsecret\n": ""]
        for (contents, password) in cases {
            let path = try directory.write("password", contents, mode: 0o600)
            #expect(try BrokerConfiguration.password(fromFile: path) == password, "\(contents.debugDescription)")
        }
        #expect {
            try BrokerConfiguration.password(fromFile: directory.appending("missing"))
        } throws: { ($0 as? BrokerError)?.code == .invalidConfiguration }
        // Something endless or huge is refused with a reason, not read forever.
        for path in ["/dev/zero", try directory.write("huge", String(repeating: "x", count: 5000), mode: 0o600)] {
            #expect {
                try BrokerConfiguration.password(fromFile: path)
            } throws: { ($0 as? BrokerError)?.code == .invalidConfiguration }
        }
    }
}
