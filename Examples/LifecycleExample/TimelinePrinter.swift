import AppLifecycle
import AppLifecycleTesting
import Foundation

/// Prints a timeline of delegate calls and notifications, as text or one JSON object per line.
@MainActor
final class TimelinePrinter {
    enum Format {
        case text
        case json
    }

    let format: Format
    private let clock: () -> Duration
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(format: Format, clock: @escaping () -> Duration) {
        self.format = format
        self.clock = clock
    }

    /// The JSON line for one entry: `{"kind", "name", "state", "userInfo"}`.
    struct TraceLine: Encodable {
        let kind: String
        let name: String
        let state: String
        let userInfo: UserInfo
    }

    func print(_ entry: LifecycleRecorder.Entry) {
        switch format {
        case .json:
            let line = TraceLine(
                kind: entry.kind.rawValue, name: entry.name, state: entry.state.rawValue, userInfo: entry.userInfo)
            if let data = try? encoder.encode(line) { emit(String(decoding: data, as: UTF8.self)) }
        case .text:
            let info = entry.userInfo.isEmpty ? "" : "  " + entry.userInfo.description
            let kind = entry.kind == .delegate ? "delegate    " : "notification"
            emit(
                "\(timestamp())  \(entry.state.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(kind)  \(entry.name)\(info)"
            )
        }
    }

    func note(_ text: String) {
        guard format == .text else { return }
        emit("\n\(timestamp())  ── \(text)")
    }

    /// A closing line (text format only).
    func summary(_ text: String) {
        guard format == .text else { return }
        emit("\n" + text)
    }

    private func timestamp() -> String {
        let total = clock().timeInterval
        let minutes = Int(total) / 60
        let seconds = total - Double(minutes * 60)
        return String(format: "[+%4d:%06.3f]", minutes, seconds)
    }

    private func emit(_ line: String) {
        Swift.print(line)
        fflush(nil)
    }
}
