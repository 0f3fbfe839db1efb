#if canImport(Glibc)
    import Glibc
#endif

/// A generic-netlink socket subscribed to the kernel's thermal events: family `thermal`, multicast
/// group `event` (`linux/thermal.h`, `CONFIG_THERMAL_NETLINK`).
///
/// The kernel multicasts an event when a zone crosses a trip point on the way up or down, when a
/// zone or trip point is added, changed, removed, enabled or disabled, and when a cooling device
/// changes state. The socket is non-blocking: watch ``fileDescriptor`` for `EPOLLIN` and call
/// ``drain()`` on each readiness. The constants are the kernel's UAPI (`linux/netlink.h`,
/// `linux/genetlink.h`), which Swift's Glibc module does not import; netlink's integers are in host
/// byte order, little-endian on every platform the project builds for.
package struct ThermalEventSocket: Sendable {
    /// `THERMAL_GENL_FAMILY_NAME`.
    package static let familyName = "thermal"
    /// `THERMAL_GENL_EVENT_GROUP_NAME`.
    package static let eventGroupName = "event"
    /// The name in the errors this socket throws.
    package static let sourceName = "thermal-netlink"

    /// The events after which the zones are read again: `THERMAL_GENL_EVENT_TZ_CREATE` (1) to
    /// `…_TZ_TRIP_DELETE` (9). Not `…_CDEV_STATE_UPDATE` (12), which a throttling governor sends at
    /// every poll, nor the CPU-capability events: the state follows the trip points, and those
    /// would wake an idle daemon for nothing.
    package static let rereadEvents: Set<UInt8> = Set(1...9)

    /// The socket; non-blocking, close-on-exec.
    package let fileDescriptor: Int32
    /// The family's id (the netlink message type of its events).
    package let familyID: UInt16
    /// The `event` group's id.
    package let groupID: UInt32

    private static let netlinkGeneric: Int32 = 16  // NETLINK_GENERIC
    private static let controllerID: UInt16 = 0x10  // GENL_ID_CTRL
    private static let getFamily: UInt8 = 3  // CTRL_CMD_GETFAMILY
    private static let attributeFamilyID: UInt16 = 1  // CTRL_ATTR_FAMILY_ID
    private static let attributeFamilyName: UInt16 = 2  // CTRL_ATTR_FAMILY_NAME
    private static let attributeMulticastGroups: UInt16 = 7  // CTRL_ATTR_MCAST_GROUPS
    private static let attributeGroupName: UInt16 = 1  // CTRL_ATTR_MCAST_GRP_NAME
    private static let attributeGroupID: UInt16 = 2  // CTRL_ATTR_MCAST_GRP_ID
    private static let messageError: UInt16 = 2  // NLMSG_ERROR
    private static let solNetlink: Int32 = 270  // SOL_NETLINK
    private static let addMembership: Int32 = 1  // NETLINK_ADD_MEMBERSHIP
    private static let headerSize = 16  // sizeof(struct nlmsghdr)
    private static let genericHeaderSize = 4  // sizeof(struct genlmsghdr)

    /// Opens the socket, resolves the family and its group, and joins the group.
    ///
    /// - Parameters:
    ///   - family: The generic-netlink family (tests name one that does not exist).
    ///   - group: The multicast group of the family.
    /// - Throws: `HostSourceError`: ``HostSourceError/Code/notFound`` when the kernel has no such family
    ///   (no `CONFIG_THERMAL_NETLINK`) or the family no such group; the `errno` of a failed call otherwise.
    package init(family: String = familyName, group: String = eventGroupName) throws(HostSourceError) {
        let source = Self.sourceName
        let fd = socket(
            AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            Self.netlinkGeneric)
        guard fd >= 0 else {
            throw HostSourceError(errno: errno, source: source, message: "open a generic-netlink socket")
        }
        do throws(HostSourceError) {
            let (familyID, groups) = try Self.resolve(family, fd: fd)
            guard let groupID = groups[group] else {
                throw HostSourceError(
                    code: .notFound, source: source,
                    message:
                        "the generic-netlink family \(family) has no group \(group) (it has \(groups.keys.sorted()))")
            }
            var membership = groupID
            let joined = setsockopt(
                fd, Self.solNetlink, Self.addMembership, &membership, socklen_t(MemoryLayout<UInt32>.size))
            guard joined == 0 else {
                throw HostSourceError(
                    errno: errno, source: source, message: "join \(family)/\(group) (group \(groupID))")
            }
            self.fileDescriptor = fd
            self.familyID = familyID
            self.groupID = groupID
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
    }

    /// Reads every queued message without blocking.
    ///
    /// - Returns: The event commands received, in order, and whether the kernel dropped some
    ///   (`ENOBUFS`: the socket's buffer overran, so the zones must be read again anyway).
    package func drain() -> (events: [UInt8], overrun: Bool) {
        var events: [UInt8] = []
        var overrun = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fileDescriptor, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ENOBUFS {
                    overrun = true
                    continue
                }
                break  // EAGAIN: drained
            }
            if n == 0 { break }
            for message in Self.messages(in: buffer[0..<n]) where message.type == familyID {
                if let command = message.payload.first { events.append(command) }
            }
        }
        return (events, overrun)
    }

    // MARK: - Netlink encoding

    private struct Message {
        var type: UInt16
        /// What follows the `nlmsghdr`.
        var payload: ArraySlice<UInt8>
    }

    private static func resolve(_ family: String, fd: Int32) throws(HostSourceError) -> (UInt16, [String: UInt32]) {
        let source = sourceName
        let name = Array(family.utf8) + [0]
        var attribute = le16(UInt16(4 + name.count)) + le16(attributeFamilyName) + name
        while attribute.count % 4 != 0 { attribute.append(0) }
        let length = headerSize + genericHeaderSize + attribute.count
        // nlmsghdr: length, type GENL_ID_CTRL, flags NLM_F_REQUEST, sequence 1, port 0 (the kernel fills it).
        var request = le32(UInt32(length)) + le16(controllerID) + le16(1) + le32(1) + le32(0)
        request += [getFamily, 1, 0, 0] + attribute
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else {
            throw HostSourceError(errno: errno, source: source, message: "ask the kernel for the family \(family)")
        }
        // The controller answers within send(2); a missing answer is an error, not a wait.
        var buffer = [UInt8](repeating: 0, count: 16384)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else {
            throw HostSourceError(
                errno: n < 0 ? errno : EPROTO, source: source, message: "read the answer for the family \(family)")
        }
        for message in messages(in: buffer[0..<n]) {
            if message.type == messageError {
                let code = message.payload.count >= 4 ? Int32(bitPattern: readLE32(message.payload, 0)) : -EPROTO
                if code == 0 { continue }
                if -code == ENOENT {
                    throw HostSourceError(
                        code: .notFound, source: source,
                        message: "the kernel has no generic-netlink family \(family) (no CONFIG_THERMAL_NETLINK)",
                        errno: ENOENT)
                }
                throw HostSourceError(errno: -code, source: source, message: "resolve the family \(family)")
            }
            guard message.type == controllerID, message.payload.count > genericHeaderSize else { continue }
            var familyID: UInt16?
            var groups: [String: UInt32] = [:]
            for (type, value) in attributes(in: message.payload.dropFirst(genericHeaderSize)) {
                switch type {
                case attributeFamilyID where value.count >= 2:
                    familyID = readLE16(value, 0)
                case attributeMulticastGroups:
                    for (_, entry) in attributes(in: value) {
                        var groupName: String?
                        var groupID: UInt32?
                        for (field, content) in attributes(in: entry) {
                            if field == attributeGroupName {
                                groupName = String(decoding: content.prefix { $0 != 0 }, as: UTF8.self)
                            } else if field == attributeGroupID, content.count >= 4 {
                                groupID = readLE32(content, 0)
                            }
                        }
                        if let groupName, let groupID { groups[groupName] = groupID }
                    }
                default:
                    break
                }
            }
            if let familyID { return (familyID, groups) }
        }
        throw HostSourceError(
            code: .systemCallFailed, source: source, message: "the kernel's answer for the family \(family) has no id",
            errno: EPROTO)
    }

    private static func messages(in bytes: ArraySlice<UInt8>) -> [Message] {
        var result: [Message] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= headerSize {
            let length = Int(readLE32(bytes, offset - bytes.startIndex))
            guard length >= headerSize, offset + length <= bytes.endIndex else { break }
            let type = readLE16(bytes, offset - bytes.startIndex + 4)
            result.append(Message(type: type, payload: bytes[(offset + headerSize)..<(offset + length)]))
            offset += (length + 3) & ~3
        }
        return result
    }

    /// The `nlattr`s in `bytes`: type (without the nested and byte-order flags) and value.
    private static func attributes(in bytes: ArraySlice<UInt8>) -> [(UInt16, ArraySlice<UInt8>)] {
        var result: [(UInt16, ArraySlice<UInt8>)] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= 4 {
            let length = Int(readLE16(bytes, offset - bytes.startIndex))
            guard length >= 4, offset + length <= bytes.endIndex else { break }
            let type = readLE16(bytes, offset - bytes.startIndex + 2) & 0x3FFF
            result.append((type, bytes[(offset + 4)..<(offset + length)]))
            offset += (length + 3) & ~3
        }
        return result
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    private static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }

    private static func readLE16(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt16 {
        let base = bytes.startIndex + offset
        return UInt16(bytes[base]) | UInt16(bytes[base + 1]) << 8
    }

    private static func readLE32(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt32 {
        let base = bytes.startIndex + offset
        return UInt32(bytes[base]) | UInt32(bytes[base + 1]) << 8 | UInt32(bytes[base + 2]) << 16
            | UInt32(bytes[base + 3]) << 24
    }
}
