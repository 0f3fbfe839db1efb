import Glibc
import Synchronization

/// An owned Unix file descriptor that travels as a D-Bus `h` value.
///
/// A descriptor received in a message belongs to that message, so SystemdBus duplicates it
/// (`fcntl(F_DUPFD_CLOEXEC)`) into a `BusFileDescriptor` that you own. Ownership rules:
///
/// - The `BusFileDescriptor` owns its fd until ``close()`` or ``take()``.
/// - ``close()`` closes it; calling it again is harmless. The fd is also closed when the
///   last reference goes away (`deinit`), so a forgotten descriptor never leaks, but code that
///   must release something at a precise moment (a logind inhibitor lock) should call
///   ``close()`` explicitly.
/// - ``take()`` hands the raw fd over to you: from then on you close it yourself.
/// - Sending a `BusFileDescriptor` as an argument does not consume it: sd-bus duplicates the
///   fd into the message, and you still own (and must close) yours.
public final class BusFileDescriptor: Sendable, CustomStringConvertible {
    private let state: Mutex<Int32?>

    /// Takes ownership of a raw file descriptor.
    ///
    /// - Parameters:
    ///   - fd: An open fd that now belongs to this object (it will close it).
    public init(owning fd: Int32) {
        state = Mutex(fd >= 0 ? fd : nil)
    }

    /// Duplicates a file descriptor that someone else keeps owning.
    ///
    /// - Parameters:
    ///   - fd: An open fd; it is duplicated with `F_DUPFD_CLOEXEC`, the original stays yours.
    /// - Throws: ``BusError`` if `fcntl` fails (for example `EBADF`, `EMFILE`).
    public convenience init(duplicating fd: Int32) throws(BusError) {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        if copy < 0 { throw BusError(errno: Glibc.errno, context: "fcntl(F_DUPFD_CLOEXEC)") }
        self.init(owning: copy)
    }

    deinit {
        if let fd = state.withLock({ $0.take() }) { Glibc.close(fd) }
    }

    /// The raw fd while it is open, or `nil` after ``close()`` or ``take()``.
    ///
    /// The value is borrowed: do not close it, and do not use it after closing this object.
    public var rawValue: Int32? { state.withLock { $0 } }

    /// Whether the descriptor is still open and owned by this object.
    public var isOpen: Bool { rawValue != nil }

    /// Closes the descriptor now. Further calls do nothing.
    public func close() {
        if let fd = state.withLock({ $0.take() }) { Glibc.close(fd) }
    }

    /// Gives up ownership and returns the raw fd, which the caller must close.
    ///
    /// - Returns: The fd, or `nil` if it was already closed or taken.
    public func take() -> Int32? {
        state.withLock { $0.take() }
    }

    /// `fd N` or `fd closed`.
    public var description: String {
        rawValue.map { "fd \($0)" } ?? "fd closed"
    }
}
