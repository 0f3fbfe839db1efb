#!/usr/bin/python3
"""A UnifiedPush connector written from the D-Bus specification with dbus-python, for testing
lifecycled's distributor against a client that is not our own Swift code (as NeoChat or Tokodon
would be one).

usage: unifiedpush-connector.py NAME LOG [--v1] [--token T] [--vapid KEY] [--distributor NAME] [--reply-delay S]
                                [--drop-repeated-ids]

Owns NAME on $DBUS_SESSION_BUS_ADDRESS, exports org.unifiedpush.Connector2 (or Connector1 with
--v1) at /org/unifiedpush/Connector, registers with the distributor, and appends one JSON line per
call it receives to LOG: {"call": "NewEndpoint"|"Message"|"Unregistered", "token", "endpoint",
"id", "message" (base64)}. Prints "ready" once registered. Control: SIGUSR1 unregisters.
--reply-delay S: answers each Message S seconds after recording it (a slow app, so that a test can
stop the distributor while a Message is outstanding).
--drop-repeated-ids: a Message whose id this process already accepted is answered but logged as
"MessageRepeat" instead of "Message" (what this project's connector does: lifecycled acknowledges a
push to a running app only once the app accepted it, so after a crash in between the broker sends it
again).
"""
import base64
import json
import signal
import sys
import time
import uuid

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

CONNECTOR_PATH = "/org/unifiedpush/Connector"
DISTRIBUTOR_PATH = "/org/unifiedpush/Distributor"


def main():
    args = sys.argv[1:]
    name, log = args[0], args[1]
    v1 = "--v1" in args
    token = args[args.index("--token") + 1] if "--token" in args else str(uuid.uuid4())
    vapid = args[args.index("--vapid") + 1] if "--vapid" in args else None
    distributor = (args[args.index("--distributor") + 1] if "--distributor" in args
                   else "org.unifiedpush.Distributor.applifecycle")
    reply_delay = float(args[args.index("--reply-delay") + 1]) if "--reply-delay" in args else 0.0
    drop_repeated = "--drop-repeated-ids" in args
    accepted_ids = set()

    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    loop = GLib.MainLoop()
    distributor_owner = {"name": None}

    def record(entry):
        with open(log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def from_distributor(sender):
        # Only the distributor we registered with may call us (the spec's sender check), by its
        # current owner: a restarted distributor has a new unique name.
        try:
            distributor_owner["name"] = bus.get_name_owner(distributor)
        except dbus.exceptions.DBusException:
            return False
        return sender == distributor_owner["name"]

    def message_call(message_id):
        """ "Message", or "MessageRepeat" for an id already accepted when repeats are dropped."""
        if drop_repeated and message_id and message_id in accepted_ids:
            return "MessageRepeat"
        accepted_ids.add(message_id)
        return "Message"

    def message_bytes(value):
        if isinstance(value, dbus.String):
            return str(value).encode()
        return bytes(bytearray(value))

    class Connector2(dbus.service.Object):
        @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", out_signature="a{sv}",
                             sender_keyword="sender")
        def Message(self, args, sender=None):
            if not from_distributor(sender):
                raise dbus.exceptions.DBusException("not the distributor", name="org.freedesktop.DBus.Error.AccessDenied")
            record({"call": message_call(str(args.get("id", ""))), "token": str(args.get("token", "")),
                    "id": str(args.get("id", "")),
                    "message": base64.b64encode(message_bytes(args["message"])).decode()})
            time.sleep(reply_delay)
            return {"id": args.get("id", "")}

        @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", sender_keyword="sender")
        def NewEndpoint(self, args, sender=None):
            if from_distributor(sender):
                record({"call": "NewEndpoint", "token": str(args["token"]), "endpoint": str(args["endpoint"])})

        @dbus.service.method("org.unifiedpush.Connector2", in_signature="a{sv}", sender_keyword="sender")
        def Unregistered(self, args, sender=None):
            if from_distributor(sender):
                record({"call": "Unregistered", "token": str(args["token"])})

    class Connector1(dbus.service.Object):
        @dbus.service.method("org.unifiedpush.Connector1", in_signature="says", sender_keyword="sender")
        def Message(self, token, message, message_id, sender=None):
            if not from_distributor(sender):
                raise dbus.exceptions.DBusException("not the distributor", name="org.freedesktop.DBus.Error.AccessDenied")
            record({"call": message_call(str(message_id)), "token": str(token), "id": str(message_id),
                    "message": base64.b64encode(message_bytes(message)).decode()})
            time.sleep(reply_delay)

        @dbus.service.method("org.unifiedpush.Connector1", in_signature="ss", sender_keyword="sender")
        def NewEndpoint(self, token, endpoint, sender=None):
            if from_distributor(sender):
                record({"call": "NewEndpoint", "token": str(token), "endpoint": str(endpoint)})

        @dbus.service.method("org.unifiedpush.Connector1", in_signature="s", sender_keyword="sender")
        def Unregistered(self, token, sender=None):
            if from_distributor(sender):
                record({"call": "Unregistered", "token": str(token)})

    _connector = (Connector1 if v1 else Connector2)(bus, CONNECTOR_PATH)
    _owned = dbus.service.BusName(name, bus, do_not_queue=True)
    proxy = bus.get_object(distributor, DISTRIBUTOR_PATH)

    def register():
        try:
            return register_once()
        except dbus.exceptions.DBusException as error:
            record({"call": "RegisterError", "name": error.get_dbus_name(), "message": error.get_dbus_message()})
            print("refused " + error.get_dbus_name(), flush=True)
            return False

    def register_once():
        if v1:
            result, reason = proxy.Register(name, token, "test connector",
                                            dbus_interface="org.unifiedpush.Distributor1")
            reply = {"success": str(result), "reason": str(reason)}
        else:
            request = {"service": name, "token": token, "description": "test connector"}
            if vapid:
                request["vapid"] = vapid
            reply = {str(k): str(v) for k, v in
                     proxy.Register(dbus.Dictionary(request, signature="sv"),
                                    dbus_interface="org.unifiedpush.Distributor2").items()}
        record({"call": "RegisterReply", **reply})
        print("ready " + reply.get("success", ""), flush=True)
        return False

    def unregister():
        if v1:
            proxy.Unregister(token, dbus_interface="org.unifiedpush.Distributor1")
        else:
            proxy.Unregister(dbus.Dictionary({"token": token}, signature="sv"),
                             dbus_interface="org.unifiedpush.Distributor2")
        return False

    GLib.idle_add(register)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda: unregister() or True)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
    loop.run()


if __name__ == "__main__":
    main()
