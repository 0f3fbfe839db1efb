import CSystemd
import Logging
import Synchronization

/// A change of the owner of a well-known bus name.
public struct NameOwnerChange: Sendable, Equatable, CustomStringConvertible {
    /// The well-known name, for example `org.freedesktop.login1`.
    public var name: String
    /// The previous owner's unique name, or `nil` if the name had no owner (it appeared).
    public var oldOwner: String?
    /// The new owner's unique name, or `nil` if the name has no owner now (it vanished).
    public var newOwner: String?

    /// Creates a change value.
    ///
    /// - Parameters:
    ///   - name: The well-known name.
    ///   - oldOwner: The previous unique owner, or `nil`.
    ///   - newOwner: The new unique owner, or `nil`.
    public init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }

    /// `name: old -> new`, with `(none)` for a missing owner.
    public var description: String {
        "\(name): \(oldOwner ?? "(none)") -> \(newOwner ?? "(none)")"
    }
}
