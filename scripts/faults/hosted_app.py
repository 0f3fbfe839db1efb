#!/usr/bin/python3
"""A minimal hosted app for the campaigns (as the tests' Python app): registers with lifecycled,
reports inactive then active, leaves on the `terminate` command, and logs to argv[1].

It does not leave when its bus goes away (exit-on-disconnect is off), so that when it is gone after
a bus death, it is lifecycled that ended it.
"""
import os
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
app = os.environ["LIFECYCLE_APP_ID"]
log_path = sys.argv[1]


def log(line):
    with open(log_path, "a") as f:
        f.write(f"{os.getpid()} {line}\n")


bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
bus.set_exit_on_disconnect(False)
daemon = dbus.Interface(bus.get_object("org.applifecycle.Lifecycled1", "/org/applifecycle/Lifecycled1"),
                        "org.applifecycle.Lifecycled1")


def on_command(app_id, command, arguments):
    if command == "terminate":
        log("terminate")
        try:
            daemon.ReportState(app, "not-running")
        finally:
            os._exit(0)


bus.add_signal_receiver(on_command, signal_name="Command", dbus_interface="org.applifecycle.Lifecycled1",
                        bus_name="org.applifecycle.Lifecycled1", arg0=app)
daemon.RegisterApp(app)
daemon.ReportState(app, "inactive")
daemon.ReportState(app, "active")
log("active")
GLib.MainLoop().run()
