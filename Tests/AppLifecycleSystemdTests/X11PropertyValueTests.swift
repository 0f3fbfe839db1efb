import Testing

@testable import AppLifecycleSystemd

/// Decoding what any X client may have written on its window: nothing traps, wrong shapes read as absent.
@Suite("X11 property values and client windows")
struct X11PropertyValueTests {
    private func value(format: UInt8, _ bytes: [UInt8]) -> X11PropertyValue {
        X11PropertyValue(type: 31, format: format, bytes: bytes)
    }

    @Test("WM_CLASS is the instance and the class, NUL-separated")
    func wmClass() {
        var window = X11ClientWindow(id: 7)
        window.apply(.wmClass, value(format: 8, Array("xterm\0Notes\0".utf8)), hiddenAtom: 0)
        #expect(window.instanceName == "xterm")
        #expect(window.className == "Notes")
        // Only an instance, no terminator, invalid UTF-8: still no trap.
        window.apply(.wmClass, value(format: 8, [0x61, 0xff]), hiddenAtom: 0)
        #expect(window.instanceName == "a\u{FFFD}")
        #expect(window.className == nil)
        // The wrong format reads as absent.
        window.apply(.wmClass, value(format: 32, Array("ab\0cd\0\0\0".utf8)), hiddenAtom: 0)
        #expect(window.instanceName == nil && window.className == nil)
    }

    @Test("_NET_WM_PID is one positive 32-bit cardinal, else absent")
    func pid() {
        var window = X11ClientWindow(id: 7)
        window.apply(.pid, value(format: 32, [0x39, 0x30, 0, 0]), hiddenAtom: 0)
        #expect(window.processID == 12345)
        for bad in [[0, 0, 0, 0], [0xff, 0xff, 0xff, 0xff], [0x39, 0x30]] as [[UInt8]] {
            window.apply(.pid, value(format: 32, bad), hiddenAtom: 0)
            #expect(window.processID == nil, "\(bad)")
        }
        window.apply(.pid, value(format: 8, [0x39, 0x30, 0, 0]), hiddenAtom: 0)
        #expect(window.processID == nil)
    }

    @Test("minimised: _NET_WM_STATE_HIDDEN in _NET_WM_STATE, or WM_STATE IconicState")
    func minimised() {
        var window = X11ClientWindow(id: 7)
        let hidden: UInt32 = 321
        window.apply(.netState, value(format: 32, [1, 0, 0, 0, 0x41, 0x01, 0, 0]), hiddenAtom: hidden)
        #expect(window.topLevelWindow(isActivated: false).isMinimized)
        window.apply(.netState, .absent, hiddenAtom: hidden)
        #expect(!window.topLevelWindow(isActivated: false).isMinimized)
        window.apply(.wmState, value(format: 32, [3, 0, 0, 0, 0, 0, 0, 0]), hiddenAtom: hidden)
        #expect(window.topLevelWindow(isActivated: false).isMinimized)
        window.apply(.wmState, value(format: 32, [1, 0, 0, 0]), hiddenAtom: hidden)
        #expect(!window.topLevelWindow(isActivated: false).isMinimized)
    }

    @Test("the title is _NET_WM_NAME, else WM_NAME; empty is none")
    func title() {
        var window = X11ClientWindow(id: 7)
        window.apply(.wmName, value(format: 8, Array("legacy".utf8)), hiddenAtom: 0)
        #expect(window.topLevelWindow(isActivated: true).title == "legacy")
        window.apply(.netName, value(format: 8, Array("Grüße".utf8)), hiddenAtom: 0)
        #expect(window.topLevelWindow(isActivated: true).title == "Grüße")
        window.apply(.netName, value(format: 8, [0]), hiddenAtom: 0)
        #expect(window.topLevelWindow(isActivated: true).title == "legacy")
    }
}
