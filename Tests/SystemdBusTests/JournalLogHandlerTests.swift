import Glibc
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

/// A stand-in journald: a datagram socket that receives native-protocol entries.
private final class JournalStandIn {
    let directory: TemporaryDirectory
    let path: String
    private let fd: Int32

    init() throws {
        directory = try TemporaryDirectory(prefix: "journal")
        path = directory.appending("socket")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, bindUnixSocket(fd, to: path) == 0 else { throw FixtureError("cannot bind \(path)") }
    }

    deinit {
        close(fd)
        directory.remove()
    }

    /// Receives one entry (the send is synchronous, so it is queued already) and decodes it.
    func receive() throws -> [String: String] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard count > 0 else { throw FixtureError("no entry received (errno \(errno))") }
        return try Self.decode(Array(buffer[0..<count]))
    }

    /// Decodes journald's native protocol, both forms of a field.
    static func decode(_ bytes: [UInt8]) throws -> [String: String] {
        var fields: [String: String] = [:]
        var index = 0
        while index < bytes.count {
            guard let end = bytes[index...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") })
            else {
                throw FixtureError("truncated field name")
            }
            let name = String(decoding: bytes[index..<end], as: UTF8.self)
            if bytes[end] == UInt8(ascii: "=") {
                guard let newline = bytes[end...].firstIndex(of: UInt8(ascii: "\n")) else {
                    throw FixtureError("no newline")
                }
                fields[name] = String(decoding: bytes[(end + 1)..<newline], as: UTF8.self)
                index = newline + 1
            } else {
                let lengthStart = end + 1
                var length: UInt64 = 0
                for offset in 0..<8 { length |= UInt64(bytes[lengthStart + offset]) << (8 * UInt64(offset)) }
                let valueStart = lengthStart + 8
                let valueEnd = valueStart + Int(length)
                guard valueEnd < bytes.count, bytes[valueEnd] == UInt8(ascii: "\n") else {
                    throw FixtureError("bad binary field")
                }
                fields[name] = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
                index = valueEnd + 1
            }
        }
        return fields
    }
}

@Suite("JournalLogHandler: structured entries in journald's native protocol")
struct JournalLogHandlerTests {
    @Test func anEntryCarriesMessagePriorityIdentifierSourceAndMetadataFields() throws {
        let journal = try JournalStandIn()
        var logger = Logger(label: "lifecycled.test") { label in
            JournalLogHandler(label: label, identifier: "lifecycled", destination: .socket(journal.path))
        }
        logger[metadataKey: "app-id"] = "org.example.Counter"
        let line: UInt = #line + 1
        logger.warning("frozen for sleep", metadata: ["pid": "42", "_TRUSTED": "forged"])
        let fields = try journal.receive()
        #expect(fields["MESSAGE"] == "frozen for sleep")
        #expect(fields["PRIORITY"] == "4")
        #expect(fields["SYSLOG_IDENTIFIER"] == "lifecycled")
        #expect(fields["LOGGER"] == "lifecycled.test")
        #expect(fields["CODE_FILE"]?.hasSuffix("JournalLogHandlerTests.swift") == true)
        #expect(fields["CODE_LINE"] == "\(line)")
        #expect(
            fields["CODE_FUNC"]?.hasPrefix("anEntryCarriesMessagePriorityIdentifierSourceAndMetadataFields") == true)
        #expect(fields["APP_ID"] == "org.example.Counter")
        #expect(fields["PID"] == "42")
        // A metadata key cannot forge one of the journal's own, trusted (underscore) fields.
        #expect(fields["_TRUSTED"] == nil)
        #expect(fields["TRUSTED"] == "forged")
    }

    @Test func aMultiLineMessageTravelsInTheBinarySafeForm() throws {
        let journal = try JournalStandIn()
        let logger = Logger(label: "test") { label in
            JournalLogHandler(label: label, identifier: "test", destination: .socket(journal.path))
        }
        logger.error("first line\nsecond line")
        let fields = try journal.receive()
        #expect(fields["MESSAGE"] == "first line\nsecond line")
        #expect(fields["PRIORITY"] == "3")
    }

    @Test func levelsMapToSyslogPriorities() {
        let levels: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]
        #expect(levels.map(JournalLogHandler.priority(of:)) == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test func metadataKeysBecomeValidFieldNames() {
        #expect(JournalLogHandler.fieldName(for: "app-id") == "APP_ID")
        #expect(JournalLogHandler.fieldName(for: "unique.name") == "UNIQUE_NAME")
        #expect(JournalLogHandler.fieldName(for: "__x") == "X")
        #expect(JournalLogHandler.fieldName(for: "1st") == "F_1ST")
        #expect(JournalLogHandler.fieldName(for: "__") == nil)
        #expect(JournalLogHandler.fieldName(for: String(repeating: "k", count: 100))?.count == 64)
    }

    @Test func standardErrorIsTheJournalOnlyWhileItIsTheStreamJournalStreamNames() {
        var status = stat()
        #expect(fstat(STDERR_FILENO, &status) == 0)
        let own = "\(status.st_dev):\(status.st_ino)"
        #expect(JournalLogHandler.standardErrorIsJournal(environment: ["JOURNAL_STREAM": own]))
        #expect(
            !JournalLogHandler.standardErrorIsJournal(environment: [
                "JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino &+ 1)"
            ]))
        #expect(!JournalLogHandler.standardErrorIsJournal(environment: ["JOURNAL_STREAM": "garbage"]))
        #expect(!JournalLogHandler.standardErrorIsJournal(environment: [:]))
    }

    @Test func aUnitWithTheNativeSocketLogsToTheJournalEvenWithStandardErrorElsewhere() throws {
        let journal = try JournalStandIn()
        let unit = ["INVOCATION_ID": "0123456789abcdef0123456789abcdef"]
        #expect(JournalLogHandler.shouldLogToJournal(environment: unit, socketPath: journal.path))
        // Not a unit, or no journal socket (a plain file is not one): standard error.
        #expect(!JournalLogHandler.shouldLogToJournal(environment: [:], socketPath: journal.path))
        let file = try journal.directory.write("not-a-socket", "")
        #expect(!JournalLogHandler.shouldLogToJournal(environment: unit, socketPath: file))
        #expect(
            !JournalLogHandler.shouldLogToJournal(environment: unit, socketPath: journal.directory.appending("absent")))
    }
}
