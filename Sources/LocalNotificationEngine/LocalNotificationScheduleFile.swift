import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FoundationEssentials

/// The schedule of local notifications on disk: one JSON file, replaced atomically
/// (`AtomicFile`) after every change, so a notification outlives the daemon's
/// restart, a `kill -9` and a reboot.
///
/// ```json
/// {"version": 1,
///  "notifications": [{"app": "org.example.Notes", "scheduledAt": 1790000000.0, "occurrence": 0,
///                     "buttons": [{"identifier": "snooze", "title": "Snooze", "foreground": false}],
///                     "notification": {"identifier": "…", "fireDate": {"$date": "…"}, …}}],
///  "undelivered": [{"app": …, "notification": {…}, …}],
///  "rejected": [{"reason": "…", "entry": {…}}]}
/// ```
///
/// `undelivered` holds notifications that fired when no notification server could show them,
/// kept for their app's next activation (entries as in `notifications`; a reader that does not
/// know the key ignores it). An entry with `"remote": true` there is a push's banner
/// (`ScheduledLocalNotification/isRemote`): its notification's `userInfo` is the push's payload.
///
/// Loading never loses data: an entry that does not read as a notification is reported, kept
/// verbatim under `rejected` and written back with the rest; a file that is not JSON, or whose
/// `version` is newer than this code knows, is reported and not usable (``Loaded/writable``
/// is `false`; ``Loaded/isCorrupt`` says whether the owner should set it aside and start a new
/// one, or leave it to the newer version).
package enum LocalNotificationScheduleFile {
    /// The format version this code writes and reads.
    package static let version = 1
    /// The file's name in the state directory.
    package static let fileName = "local-notifications.json"

    /// What a load found.
    package struct Loaded: Sendable {
        /// The notifications that read well.
        package var notifications: [ScheduledLocalNotification] = []
        /// The fired notifications kept for their app's next activation.
        package var undelivered: [ScheduledLocalNotification] = []
        /// Entries that did not, verbatim, with the reason (written back as they were).
        package var rejected: [(entry: UserInfoValue, reason: String)] = []
        /// Whether the file may be replaced: `false` when it could not be read as a whole or is
        /// from a newer version (``problem`` says which).
        package var writable = true
        /// Why the file as a whole could not be used, or `nil`.
        package var problem: String?
        /// Whether the file could not be read as a schedule at all (unreadable, not JSON, no
        /// version): nothing in it can be used, so its owner sets it aside and starts a new one.
        /// `false` for a file of a newer version, which that version can still read.
        package var isCorrupt = false

        /// An empty schedule (what a missing file reads as).
        package init() {}
    }

    /// What a write puts in the file.
    package struct Contents: Sendable {
        /// The scheduled notifications.
        package var notifications: [ScheduledLocalNotification]
        /// Fired notifications kept for their app's next activation.
        package var undelivered: [ScheduledLocalNotification]
        /// Entries that did not read, verbatim, with the reason.
        package var rejected: [(entry: UserInfoValue, reason: String)]

        /// Contents to write.
        package init(
            notifications: [ScheduledLocalNotification], undelivered: [ScheduledLocalNotification] = [],
            rejected: [(entry: UserInfoValue, reason: String)] = []
        ) {
            self.notifications = notifications
            self.undelivered = undelivered
            self.rejected = rejected
        }
    }

    /// The largest schedule file read: the schedule's own bounds (8 MiB scheduled, 8 MiB kept for
    /// the next activation, 8 MiB of refused entries kept verbatim) with room for JSON's overhead.
    /// A larger file is corrupt: it is set aside, not loaded into memory.
    package static let maximumFileSize = 64 << 20

    /// Reads the schedule; a missing file is an empty schedule.
    ///
    /// - Parameters:
    ///   - url: The file.
    package static func load(from url: URL) -> Loaded {
        var loaded = Loaded()
        let data: Data
        do {
            data = try AtomicFile.read(from: url, limit: maximumFileSize)
        } catch {
            if error.code == .notFound { return loaded }
            loaded.writable = false
            loaded.isCorrupt = true
            loaded.problem = "\(error)"
            return loaded
        }
        guard let root = try? JSONDecoder().decode(UserInfoValue.self, from: data), let object = root.dictionaryValue
        else {
            loaded.writable = false
            loaded.isCorrupt = true
            loaded.problem = "\(url.path) is not a JSON object"
            return loaded
        }
        guard let version = object["version"]?.intValue else {
            loaded.writable = false
            loaded.isCorrupt = true
            loaded.problem = "\(url.path) has no version"
            return loaded
        }
        guard version <= Self.version else {
            loaded.writable = false
            loaded.problem =
                "\(url.path) is version \(version), newer than this lifecycled reads (\(Self.version)); left as it is"
            return loaded
        }
        for entry in object["notifications"]?.arrayValue ?? [] {
            do {
                loaded.notifications.append(try notification(from: entry))
            } catch {
                loaded.rejected.append((entry, error.message))
            }
        }
        for entry in object["undelivered"]?.arrayValue ?? [] {
            do {
                loaded.undelivered.append(try notification(from: entry))
            } catch {
                loaded.rejected.append((entry, error.message))
            }
        }
        for previous in object["rejected"]?.arrayValue ?? [] {
            loaded.rejected.append(
                (
                    previous.dictionaryValue?["entry"] ?? previous,
                    previous.dictionaryValue?["reason"]?.stringValue ?? "rejected before"
                ))
        }
        return loaded
    }

    /// Replaces the file with these contents (atomically, fsynced).
    ///
    /// - Throws: `ApplicationError` (`io`) when writing fails.
    package static func save(_ contents: Contents, to url: URL) throws {
        try AtomicFile.write(try encode(contents), to: url)
    }

    /// The file's bytes for these contents.
    ///
    /// - Throws: An `EncodingError` (not expected: every value is a property list).
    package static func encode(_ contents: Contents) throws -> Data {
        var root: [String: UserInfoValue] = [
            "version": .int(Int64(version)), "notifications": .array(contents.notifications.map(entry)),
        ]
        if !contents.undelivered.isEmpty { root["undelivered"] = .array(contents.undelivered.map(entry)) }
        let rejected = contents.rejected
        if !rejected.isEmpty {
            root["rejected"] = .array(
                rejected.map { .dictionary(["entry": $0.entry, "reason": .string($0.reason)]) })
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(UserInfoValue.dictionary(root))
    }

    /// One notification's entry.
    package static func entry(_ notification: ScheduledLocalNotification) -> UserInfoValue {
        var fields: [String: UserInfoValue] = [
            "app": .string(notification.appID),
            "scheduledAt": .double(notification.scheduledAt.timeIntervalSince1970),
            "occurrence": .int(Int64(notification.occurrence)),
            "buttons": .array(notification.buttons.map(\.propertyList)),
            "notification": .dictionary(notification.payload),
        ]
        if notification.isRemote { fields["remote"] = .bool(true) }
        return .dictionary(fields)
    }

    /// Reads one entry.
    ///
    /// - Throws: `ApplicationError` (`invalidInput`) naming what is wrong.
    package static func notification(from entry: UserInfoValue) throws(ApplicationError) -> ScheduledLocalNotification {
        guard let fields = entry.dictionaryValue else {
            throw ApplicationError(.invalidInput, "an entry is not an object")
        }
        guard let app = fields["app"]?.stringValue, !app.isEmpty else {
            throw ApplicationError(.invalidInput, "an entry has no app")
        }
        guard let payload = fields["notification"]?.dictionaryValue else {
            throw ApplicationError(.invalidInput, "the entry of \(app) has no notification")
        }
        // A hand-edited 1e300 or a 9e18th occurrence would overflow the fire-time arithmetic.
        guard let scheduledAt = fields["scheduledAt"]?.doubleValue,
            UserInfoValue.representableDateSeconds.contains(scheduledAt)
        else {
            throw ApplicationError(.invalidInput, "the entry of \(app) has no valid scheduledAt (year 1 to 9999)")
        }
        var buttons: [ScheduledLocalNotification.Button] = []
        for value in fields["buttons"]?.arrayValue ?? [] {
            guard let button = ScheduledLocalNotification.Button(propertyList: value) else {
                throw ApplicationError(.invalidInput, "the entry of \(app) has a malformed button")
            }
            buttons.append(button)
        }
        guard let occurrence = Int(exactly: fields["occurrence"]?.intValue ?? 0),
            (0...ScheduledLocalNotification.maximumOccurrence).contains(occurrence)
        else {
            throw ApplicationError(.invalidInput, "the entry of \(app) has an invalid occurrence")
        }
        return try ScheduledLocalNotification(
            appID: app, payload: payload, buttons: buttons, scheduledAt: Date(timeIntervalSince1970: scheduledAt),
            occurrence: occurrence, isRemote: fields["remote"]?.boolValue ?? false)
    }
}
