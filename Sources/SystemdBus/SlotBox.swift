import CSystemd

/// Base of every Swift object that sd-bus holds as a slot's userdata.
///
/// The box is passed retained as userdata; the slot's destroy callback releases it, so the box
/// lives exactly as long as the slot. Slots are made *floating* (owned by the bus), so closing
/// the bus frees them and fires every destroy callback, which lets pending work fail cleanly.
class SlotBox: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `slot` is read and written only on the loop thread
    // (creation, callbacks, destroy callback and cancellation all run there); subclasses only
    // add immutable state or loop-confined state with the same rule.

    /// The floating slot while it exists (cleared by the destroy callback). Loop thread only.
    var slot: OpaquePointer?

    /// The userdata to pass to sd-bus: retains the box until ``adopt(_:)``'s destroy callback.
    func retainedUserdata() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Balances ``retainedUserdata()`` when the slot could not be created.
    static func releaseUserdata(_ userdata: UnsafeMutableRawPointer) {
        Unmanaged<SlotBox>.fromOpaque(userdata).release()
    }

    /// The box behind a userdata pointer, unretained.
    static func from<T: SlotBox>(_ userdata: UnsafeMutableRawPointer?, as type: T.Type = T.self) -> T {
        Unmanaged<SlotBox>.fromOpaque(userdata!).takeUnretainedValue() as! T
    }

    /// Takes a freshly created (non-floating) slot: sets the destroy callback and hands the
    /// slot to the bus (floating). Loop thread only.
    func adopt(_ slot: OpaquePointer) {
        self.slot = slot
        _ = sd_bus_slot_set_destroy_callback(slot) { userdata in
            let box = Unmanaged<SlotBox>.fromOpaque(userdata!).takeRetainedValue()
            box.slot = nil
            box.slotDestroyed()
        }
        _ = sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    /// Frees the slot now if it still exists (its destroy callback runs). Loop thread only.
    func destroySlot() {
        guard let slot else { return }
        sd_bus_slot_ref(slot)
        _ = sd_bus_slot_set_floating(slot, 0)
        sd_bus_slot_unref(slot)
    }

    /// Called on the loop thread after the slot is gone (cancelled or the bus closed).
    func slotDestroyed() {}
}
