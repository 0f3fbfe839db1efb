#!/usr/bin/python3
"""Run as another uid (setpriv) by other_uid.py: calls each (bus name, path, interface, member,
signature, arguments) of the plan on stdin (JSON) and prints one JSON line per call: its error
name, or "success" with the reply."""
import json
import os
import sys

import dbus


def value(item):
    """A dbus-python value from the plan's typed form: [signature, python value]."""
    signature, raw = item
    if signature == "s":
        return dbus.String(raw)
    if signature == "u":
        return dbus.UInt32(raw)
    if signature == "x":
        return dbus.Int64(raw)
    if signature == "b":
        return dbus.Boolean(raw)
    if signature == "a{sv}":
        return dbus.Dictionary({k: value(v) for k, v in raw.items()}, signature="sv")
    if signature == "v:s":
        return dbus.String(raw, variant_level=1)
    raise ValueError(f"no plan value for {signature}")


def main():
    plan = json.load(sys.stdin)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
    for call in plan:
        try:
            reply = bus.call_blocking(call["bus_name"], call["path"], call["interface"], call["member"],
                                      call["signature"], [value(a) for a in call["arguments"]], timeout=10)
            outcome = {"result": "success", "reply": str(reply)[:200]}
        except dbus.exceptions.DBusException as error:
            outcome = {"result": error.get_dbus_name(), "message": (error.get_dbus_message() or "")[:200]}
        print(json.dumps({**{k: call[k] for k in ("path", "interface", "member")}, **outcome}), flush=True)


if __name__ == "__main__":
    main()
