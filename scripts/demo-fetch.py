#!/usr/bin/python3
"""make demo's second half (also `make demo-fetch`): background fetch that follows the device, and a rotation.

  NetworkManager, power-profiles-daemon, iio-sensor-proxy (python-dbusmock, a private system bus)
        ──► lifecycled --host-source device-conditions (a private session bus) ──► counter-app

counter-app's manifest declares the `fetch` background mode and the app asks for fetches every 15
minutes. lifecycled's fetch clock is its test clock (`--enable-simulate`, `Simulate("fetch-clock")`),
so the day's quarter hours pass in a moment; the device's conditions are the real services' D-Bus
properties, changed in the mocks and heard by lifecycled through `PropertiesChanged`. The day: on
Wi-Fi a due fetch runs; on a metered network it is deferred until the network is not metered; in
Low Power Mode (power-saver) it is deferred until the profile is balanced again; then, with the app
in the foreground, Low Power Mode, a hot device and a turn of the device reach the app's
notifications and orientation callbacks. Every process is stopped by its own pid.
"""
import argparse
import json
import os
import subprocess
import tempfile

from demo_support import Processes, lines, say, start_bus
from demo_support import wait_for as wait_for_any

APP = "org.example.Counter"
LIFECYCLED = ["--dest", "org.applifecycle.Lifecycled1", "--object-path", "/org/applifecycle/Lifecycled1"]
NM = ("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager")
PPD = ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles")
SENSOR = ("net.hadess.SensorProxy", "/net/hadess/SensorProxy")


def wait_for(what, condition, timeout=20):
    wait_for_any(what, condition, timeout, demo="demo-fetch")


def gdbus(address, *arguments):
    """`gdbus call` on `address`; exits the demo with gdbus's message when the call fails."""
    result = subprocess.run(["/usr/bin/gdbus", "call", "--address", address, *arguments], capture_output=True,
                            text=True, timeout=20)
    if result.returncode != 0:
        raise SystemExit(f"demo-fetch: gdbus call {' '.join(arguments)}: {result.stderr.strip()}")
    return result.stdout.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the directory with the built products")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (the logs) afterwards")
    options = parser.parse_args()
    build = options.build
    work = tempfile.mkdtemp(prefix="demo-fetch-")
    processes = Processes(work)

    def start(name, argv, env=None):
        return processes.start(name, argv, env={**os.environ, **(env or {})})

    try:
        session = start_bus(processes, work, "session-bus", "session", demo="demo-fetch")
        system = start_bus(processes, work, "system-bus", "system", demo="demo-fetch")

        # The device's services: python-dbusmock's templates on the private system bus.
        def mock(template, name, parameters=None):
            start("mock-" + template, ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", template]
                  + (["-p", json.dumps(parameters)] if parameters else []), env={"DBUS_SYSTEM_BUS_ADDRESS": system})
            subprocess.run(["/usr/bin/gdbus", "wait", "--address", system, "--timeout", "20", name], check=True)

        def update(service, interface, properties):
            changes = ", ".join(f"'{key}': <{value}>" for key, value in properties.items())
            gdbus(system, "--dest", service[0], "--object-path", service[1], "--method",
                  "org.freedesktop.DBus.Mock.UpdateProperties", interface, "{" + changes + "}")

        mock("networkmanager", NM[0])
        # The template has Connectivity (full); Metered and the primary connection's type are added.
        for name, value in [("Metered", "uint32 4"), ("PrimaryConnectionType", "'802-11-wireless'")]:
            gdbus(system, "--dest", NM[0], "--object-path", NM[1], "--method",
                  "org.freedesktop.DBus.Mock.AddProperty", NM[0], name, f"<{value}>")
        mock("power_profiles_daemon", PPD[0])
        mock("iio-sensors-proxy", SENSOR[0], {"has_accelerometer": True, "accelerometer_orientation": "normal"})
        say("system bus: NetworkManager (full connectivity, Wi-Fi, not metered), power-profiles-daemon "
            "(balanced), iio-sensor-proxy (accelerometer: normal)")

        # lifecycled with counter-app, which asks for a fetch every 15 minutes.
        apps = os.path.join(work, "apps")
        os.makedirs(apps)
        counter_log = os.path.join(work, "counter.log")
        launcher = os.path.join(work, "counter.sh")
        with open(launcher, "w") as f:
            f.write(f"#!/bin/sh\nexec {build}/counter-app --host lifecycled --state-directory {work}/counter-state "
                    f"--fetch-interval 900 >>{counter_log} 2>&1\n")
        os.chmod(launcher, 0o755)
        with open(os.path.join(apps, APP + ".json"), "w") as f:
            json.dump({"id": APP, "name": "Counter", "executable": launcher, "backgroundModes": ["fetch"]}, f)
        with open(os.path.join(work, "lifecycled.conf"), "w") as f:
            f.write("[lifecycle]\norientation-lock = false\n")
        daemon_log = os.path.join(work, "lifecycled.log")
        start("lifecycled", [f"{build}/lifecycled", "--address", session, "--apps-directory", apps,
                             "--host-source", "device-conditions", "--enable-simulate", "--app-cgroups", "off",
                             "--state-directory", f"{work}/lifecycled-state", "--config", f"{work}/lifecycled.conf"],
              env={"DBUS_SESSION_BUS_ADDRESS": session, "DBUS_SYSTEM_BUS_ADDRESS": system})
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": session}

        def lifecyclectl(*arguments, check=True):
            result = subprocess.run([f"{build}/lifecyclectl", *arguments], capture_output=True, text=True, env=env,
                                    timeout=30)
            if check and result.returncode != 0:
                raise SystemExit(f"demo-fetch: lifecyclectl {' '.join(arguments)}: {result.stderr.strip()}")
            return result.stdout.strip()

        wait_for("lifecycled", lambda: lifecyclectl("status", check=False) != "")

        def entry():
            try:
                described = json.loads(lifecyclectl("apps", "--json", check=False) or "[]")
            except json.JSONDecodeError:
                return {}
            return next((app for app in described if app.get("id") == APP), {})

        def show_apps():
            table = lifecyclectl("apps").splitlines()
            row = next((line for line in table if line.startswith(APP)), "")
            say("lifecyclectl apps:\n      " + table[0] + "\n      " + row)

        heard = 0

        def show_heard():
            nonlocal heard
            said = [line.split("counter-app: ", 1)[1] for line in lines(counter_log) if "counter-app: " in line]
            for line in said[heard:]:
                say("  counter-app: " + line)
            heard = len(said)

        def fetches():
            return sum("performFetch" in line for line in lines(counter_log))

        def advance(seconds):
            gdbus(session, *LIFECYCLED, "--method", "org.applifecycle.Lifecycled1.Simulate", "fetch-clock",
                  f"{{'advance': <{float(seconds)}>}}")

        def heard_conditions(text):
            """A condition that holds once lifecycled logged new fetch conditions containing `text` (its
            FetchConditions as Swift prints it): what was changed in a mock has reached the scheduler."""
            mark = len(lines(daemon_log))
            return lambda: any("fetch conditions:" in line and text in line for line in lines(daemon_log)[mark:])

        def run_due_fetch(trigger):
            """Runs `trigger`, then waits for the fetch it lets run and for the app to be suspended again."""
            before = fetches()
            trigger()
            wait_for("the fetch", lambda: fetches() > before)
            wait_for("counter-app to be suspended again",
                     lambda: entry().get("state") == "suspended" and not entry().get("fetching"))
            show_heard()

        # Launched in the background (as for a fetch): it asks for its interval and is suspended.
        gdbus(session, *LIFECYCLED, "--method", "org.applifecycle.Lifecycled1.Launch", APP,
              "{'ApplicationLaunchOptionsLaunchedInBackgroundKey': <true>}")
        wait_for("counter-app to be suspended with a fetch scheduled",
                 lambda: entry().get("state") == "suspended" and entry().get("nextFetch") is not None)
        show_heard()
        show_apps()

        # 1. On Wi-Fi: fifteen minutes pass on the fetch clock and the due fetch runs.
        say("15 minutes pass (fetch clock); on Wi-Fi, not metered")
        run_due_fetch(lambda: advance(900))
        show_apps()

        # 2. A metered network: the due fetch waits; unmetered again, it runs at once.
        metered = heard_conditions("isMetered: Optional(true)")
        update(NM, NM[0], {"Metered": "uint32 1", "PrimaryConnectionType": "'gsm'"})
        wait_for("lifecycled to hear the metered network", metered)
        say("NetworkManager: Metered = yes (a phone's hotspot); 15 minutes pass")
        advance(900)
        wait_for("the deferral", lambda: entry().get("fetchDeferred") == "metered-network")
        show_apps()
        say("NetworkManager: Metered = no (Wi-Fi again)")
        run_due_fetch(lambda: update(NM, NM[0], {"Metered": "uint32 4",
                                                 "PrimaryConnectionType": "'802-11-wireless'"}))
        show_apps()

        # 3. Low Power Mode: the due fetch waits; balanced again, it runs.
        saver = heard_conditions("isLowPowerModeEnabled: Optional(true)")
        update(PPD, PPD[0], {"ActiveProfile": "'power-saver'"})
        wait_for("lifecycled to hear Low Power Mode", saver)
        say("power-profiles-daemon: ActiveProfile = power-saver (Low Power Mode); 15 minutes pass")
        advance(900)
        wait_for("the deferral", lambda: entry().get("fetchDeferred") == "low-power-mode")
        show_apps()
        say("power-profiles-daemon: ActiveProfile = balanced")
        run_due_fetch(lambda: update(PPD, PPD[0], {"ActiveProfile": "'balanced'"}))
        show_apps()

        # 4. In the foreground: the app hears the device's conditions, and the device turns.
        lifecyclectl("activate", APP)
        wait_for("counter-app to be active", lambda: entry().get("state") == "active")
        wait_for("the accelerometer's claim", lambda: "ClaimAccelerometer" in gdbus(
            system, "--dest", SENSOR[0], "--object-path", SENSOR[1], "--method", "org.freedesktop.DBus.Mock.GetCalls"))
        say("the user opens counter-app; lifecycled claims the accelerometer (an active app may rotate)")
        show_heard()

        def said():
            return len([line for line in lines(counter_log) if "counter-app: " in line])

        def after(what, change, count):
            """Makes `change`, then waits for the `count` lines the app prints about it and shows them."""
            before = said()
            change()
            say(what)
            wait_for(what, lambda: said() >= before + count)
            show_heard()

        after("power-profiles-daemon: ActiveProfile = power-saver",
              lambda: update(PPD, PPD[0], {"ActiveProfile": "'power-saver'"}), 2)
        after("power-profiles-daemon: ActiveProfile = balanced",
              lambda: update(PPD, PPD[0], {"ActiveProfile": "'balanced'"}), 2)
        after("power-profiles-daemon: PerformanceDegraded = high-operating-temperature",
              lambda: update(PPD, PPD[0], {"PerformanceDegraded": "'high-operating-temperature'"}), 1)
        after("lifecyclectl background-refresh org.example.Counter off",
              lambda: lifecyclectl("background-refresh", APP, "off"), 1)
        show_apps()
        after("iio-sensor-proxy: AccelerometerOrientation = left-up (the device turns a quarter clockwise)",
              lambda: gdbus(system, "--dest", SENSOR[0], "--object-path", SENSOR[1], "--method",
                            "org.freedesktop.DBus.Mock.SetInternalProperty", SENSOR[0], "AccelerometerOrientation",
                            "<'left-up'>"), 2)

        print("\nlifecycled's log, its fetch decisions:")
        for line in lines(daemon_log):
            if "background fetch" in line:
                print("  " + line[line.find(APP):] if APP in line else "  " + line)
        say("done")
    finally:
        processes.stop()
        if options.keep:
            print(f"demo-fetch: the logs are in {work}")
        else:
            subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
