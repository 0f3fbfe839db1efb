#!/usr/bin/python3
"""A stand-in UnifiedPush distributor for tests (python-dbusmock has no UnifiedPush template).

Written from the UnifiedPush D-Bus specification (DBUS 0.3.0), not from the app's connector:

    unifiedpush-standin-distributor.py NAME [--v1] [--refuse REASON]

owns ``org.unifiedpush.Distributor.NAME`` on the bus at $DBUS_SESSION_BUS_ADDRESS and exports, at
``/org/unifiedpush/Distributor``:

- ``org.unifiedpush.Distributor2`` (or, with ``--v1``, only ``org.unifiedpush.Distributor1``):
  ``Register`` answers REGISTRATION_SUCCEEDED, then calls the connector's ``NewEndpoint`` at
  ``/org/unifiedpush/Connector`` on the registration's ``service`` name with
  ``https://push.example.net/push/<160 random bits>`` (the same endpoint for the same token while
  registered); with ``--refuse REASON`` it answers REGISTRATION_FAILED with that reason and calls
  nothing. ``Unregister`` forgets the token.
- ``org.example.StandIn``, the test's controls:
  ``SendMessage(s service, s token, ay message, s id) -> a{sv}`` calls the connector's ``Message``
  and returns its reply (v1: an empty dictionary); the connector's error comes back as the error;
  ``ChangeEndpoint(s service, s token) -> s`` sends a new endpoint and returns it;
  ``SendUnregistered(s service, s token)`` calls ``Unregistered``;
  ``Calls() -> s`` is a JSON list of every distributor call received and every connector call
  sent, in order: ``{"direction": "received"|"sent", "interface", "member", "args"}`` with the
  caller's unique name as ``"sender"`` (received) or the connector's name as ``"destination"``
  (sent), and for sent calls ``"reply"`` or ``"error"`` (a D-Bus error name).

Prints ``ready`` on stdout once it owns its name; exits 0 on SIGTERM, 2 on bad arguments, 3 when
the name is taken.
"""

import argparse
import json
import os
import secrets
import signal
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

DISTRIBUTOR_PATH = "/org/unifiedpush/Distributor"
CONNECTOR_PATH = "/org/unifiedpush/Connector"
DISTRIBUTOR2 = "org.unifiedpush.Distributor2"
DISTRIBUTOR1 = "org.unifiedpush.Distributor1"
CONNECTOR2 = "org.unifiedpush.Connector2"
CONNECTOR1 = "org.unifiedpush.Connector1"
CONTROL = "org.example.StandIn"
REASONS = ("INTERNAL_ERROR", "NETWORK", "ACTION_REQUIRED", "VAPID_REQUIRED")
CALL_TIMEOUT = 5.0


def plain(value):
    """dbus-python values as JSON values (bytes as a list of ints)."""
    if isinstance(value, (bytes, bytearray, dbus.ByteArray)):
        return list(bytes(value))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, dbus.Byte) for v in value) and len(value) > 0:
            return [int(v) for v in value]
        return [plain(v) for v in value]
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return repr(value)


class StandIn(dbus.service.Object):
    """The control interface and the bookkeeping both versions share."""

    version = 2

    def __init__(self, bus, refuse):
        super().__init__(bus, DISTRIBUTOR_PATH)
        self.bus = bus
        self.refuse = refuse
        self.log = []
        self.endpoints = {}  # token -> endpoint, while registered

    # Bookkeeping

    def received(self, interface, member, args, sender):
        self.log.append(
            {"direction": "received", "interface": interface, "member": member, "args": plain(args), "sender": sender}
        )

    def send(self, service, member, args, signature, on_reply=None, on_error=None):
        """Calls the connector asynchronously and logs the call and its outcome."""
        interface = CONNECTOR2 if self.version == 2 else CONNECTOR1
        entry = {
            "direction": "sent", "interface": interface, "member": member, "args": plain(args), "destination": service
        }
        self.log.append(entry)

        def reply(*values):
            entry["reply"] = plain(list(values))
            if on_reply:
                on_reply(*values)

        def error(exception):
            entry["error"] = exception.get_dbus_name() or "unknown"
            if on_error:
                on_error(exception)

        self.bus.call_async(
            service, CONNECTOR_PATH, interface, member, signature, args, reply, error, timeout=CALL_TIMEOUT
        )

    def register(self, service, token):
        """Register's decision: (result, reason); schedules NewEndpoint on success."""
        if self.refuse:
            return ("REGISTRATION_FAILED", self.refuse)
        if not service or not token or len(token.encode()) > 100:
            return ("REGISTRATION_FAILED", "INTERNAL_ERROR")
        endpoint = self.endpoints.get(token) or self.new_endpoint()
        self.endpoints[token] = endpoint

        def after_reply():
            self.send_endpoint(service, token, endpoint)
            return False  # once

        # After the reply: the specification's order (Register answered, then NewEndpoint).
        GLib.idle_add(after_reply)
        return ("REGISTRATION_SUCCEEDED", "")

    @staticmethod
    def new_endpoint():
        return "https://push.example.net/push/" + secrets.token_urlsafe(20)

    def send_endpoint(self, service, token, endpoint):
        if self.version == 2:
            self.send(service, "NewEndpoint", [{"token": token, "endpoint": endpoint}], "a{sv}")
        else:
            self.send(service, "NewEndpoint", [token, endpoint], "ss")

    # The test's controls

    @dbus.service.method(
        CONTROL, in_signature="ssays", out_signature="a{sv}", byte_arrays=True, async_callbacks=("ok", "fail")
    )
    def SendMessage(self, service, token, message, message_id, ok, fail):
        body = dbus.ByteArray(bytes(message))
        if self.version == 2:
            fields = {"token": dbus.String(token), "message": body}
            if message_id:
                fields["id"] = dbus.String(message_id)
            self.send(
                service, "Message", [dbus.Dictionary(fields, signature="sv")], "a{sv}",
                on_reply=lambda reply=None: ok(dbus.Dictionary(reply or {}, signature="sv")), on_error=fail,
            )
        else:
            self.send(
                service, "Message", [token, body, message_id], "says",
                on_reply=lambda *_: ok(dbus.Dictionary({}, signature="sv")), on_error=fail,
            )

    @dbus.service.method(CONTROL, in_signature="ss", out_signature="s")
    def ChangeEndpoint(self, service, token):
        endpoint = self.new_endpoint()
        self.endpoints[str(token)] = endpoint
        self.send_endpoint(service, token, endpoint)
        return endpoint

    @dbus.service.method(CONTROL, in_signature="ss", out_signature="")
    def SendUnregistered(self, service, token):
        self.endpoints.pop(str(token), None)
        if self.version == 2:
            self.send(service, "Unregistered", [{"token": token}], "a{sv}")
        else:
            self.send(service, "Unregistered", [token], "s")

    @dbus.service.method(CONTROL, in_signature="", out_signature="s")
    def Calls(self):
        return json.dumps(self.log)


class Distributor2(StandIn):
    version = 2

    @dbus.service.method(DISTRIBUTOR2, in_signature="a{sv}", out_signature="a{sv}", sender_keyword="sender")
    def Register(self, args, sender=None):
        self.received(DISTRIBUTOR2, "Register", [args], sender)
        result, reason = self.register(str(args.get("service", "")), str(args.get("token", "")))
        reply = {"success": dbus.String(result)}
        if reason:
            reply["reason"] = dbus.String(reason)
        return dbus.Dictionary(reply, signature="sv")

    @dbus.service.method(DISTRIBUTOR2, in_signature="a{sv}", out_signature="", sender_keyword="sender")
    def Unregister(self, args, sender=None):
        self.received(DISTRIBUTOR2, "Unregister", [args], sender)
        self.endpoints.pop(str(args.get("token", "")), None)


class Distributor1(StandIn):
    version = 1

    @dbus.service.method(DISTRIBUTOR1, in_signature="sss", out_signature="ss", sender_keyword="sender")
    def Register(self, service, token, description, sender=None):
        self.received(DISTRIBUTOR1, "Register", [service, token, description], sender)
        return self.register(str(service), str(token))

    @dbus.service.method(DISTRIBUTOR1, in_signature="s", out_signature="", sender_keyword="sender")
    def Unregister(self, token, sender=None):
        self.received(DISTRIBUTOR1, "Unregister", [token], sender)
        self.endpoints.pop(str(token), None)


def main():
    parser = argparse.ArgumentParser(description="A stand-in UnifiedPush distributor for tests.")
    parser.add_argument("name", help="the distributor's name: it owns org.unifiedpush.Distributor.NAME")
    parser.add_argument("--v1", action="store_true", help="export only org.unifiedpush.Distributor1")
    parser.add_argument("--refuse", metavar="REASON", choices=REASONS, help="refuse every registration")
    options = parser.parse_args()
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        parser.error("DBUS_SESSION_BUS_ADDRESS is not set")

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    bus = dbus.bus.BusConnection(address)
    bus.call_on_disconnection(lambda _: loop.quit())
    service = (Distributor1 if options.v1 else Distributor2)(bus, options.refuse)
    try:
        name = dbus.service.BusName("org.unifiedpush.Distributor." + options.name, bus, do_not_queue=True)
    except dbus.exceptions.NameExistsException as error:
        print(f"cannot own the name: {error}", file=sys.stderr, flush=True)
        return 3
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
    print("ready", flush=True)
    loop.run()
    del name, service
    return 0


if __name__ == "__main__":
    sys.exit(main())
