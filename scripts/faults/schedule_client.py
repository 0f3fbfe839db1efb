#!/usr/bin/python3
"""The scheduling client of schedule_kills.py: calls ScheduleNotification in a loop, round robin over
the app ids given, each with a new identifier (PREFIX-N) and a far-future fire date, until SIGTERM
or COUNT calls. Prints "ack APP ID" after a success reply and "err NAME APP ID" after an error, one
line each, flushed: what was acknowledged is exactly the "ack" lines.

usage: schedule_client.py PREFIX COUNT APP...   (the bus: $DBUS_SESSION_BUS_ADDRESS)
"""
import os
import signal
import sys
import time

import dbus

stop = False


def on_term(*_):
    global stop
    stop = True


def main():
    prefix, count, apps = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    signal.signal(signal.SIGTERM, on_term)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
    far = dbus.Struct(("date", dbus.Double(4102444800.0, variant_level=1)), signature="sv", variant_level=1)
    n = 0
    while not stop and n < count:
        app, identifier = apps[n % len(apps)], f"{prefix}-{n}"
        n += 1
        notification = dbus.Dictionary({
            "identifier": dbus.String(identifier, variant_level=1), "fireDate": far,
            "alertTitle": dbus.String("fault campaign", variant_level=1),
            "alertBody": dbus.String(f"notification {identifier}", variant_level=1),
            "userInfo": dbus.Dictionary({"n": dbus.Int64(n, variant_level=1)}, signature="sv", variant_level=1),
        }, signature="sv")
        try:
            reply = bus.call_blocking("org.applifecycle.Lifecycled1", "/org/applifecycle/Lifecycled1",
                                      "org.applifecycle.Lifecycled1", "ScheduleNotification", "sa{sv}",
                                      [app, notification], timeout=25)
            print(f"ack {app} {reply}", flush=True)
        except dbus.exceptions.DBusException as error:
            name = error.get_dbus_name()
            print(f"err {name} {app} {identifier}", flush=True)
            if name in ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"):
                time.sleep(0.01)  # lifecycled is down: it is being restarted


if __name__ == "__main__":
    main()
