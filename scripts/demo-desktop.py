#!/usr/bin/python3
"""make demo-desktop: the compositor decides the foreground, on this machine alone.

A real sway 1.7 (headless, pixman, run as `nobody`, as sway refuses root) with two hosted apps under
lifecycled in single-foreground mode, as on a phone: counter-app as Notes and as Counter, each with a
foot window carrying its app id. The user switches between them with swaymsg; the app behind goes to
the background, suspends and is frozen, and comes back thawed and active when it is focused again.
The timeline (lifecyclectl monitor), lifecyclectl apps and a screenshot of the session (grim) are
written to the output directory. Every process is stopped by its own pid.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

from demo_support import Processes, lines, say, start_session_bus
from demo_support import wait_for as wait_for_any

NOBODY = 65534
APPS = ["org.example.Notes", "org.example.Counter"]


def wait_for(what, condition, timeout=20):
    wait_for_any(what, condition, timeout, demo="demo-desktop")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the directory with the built products")
    parser.add_argument("--output", required=True, help="where the timeline and the screenshot go")
    arguments = parser.parse_args()
    build, output = arguments.build, os.path.abspath(arguments.output)
    for tool in ["/usr/bin/sway", "/usr/bin/swaymsg", "/usr/bin/foot", "/usr/bin/grim", "/usr/bin/setpriv"]:
        if not os.access(tool, os.X_OK):
            raise SystemExit(f"demo-desktop: {tool} is missing: apt-get install sway foot grim (make deps does)")
    if os.geteuid() != 0:
        raise SystemExit("demo-desktop: run it as root (sway runs as nobody through setpriv)")
    os.makedirs(output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="demo-desktop-")
    os.chmod(work, 0o711)
    runtime = os.path.join(work, "run")
    os.mkdir(runtime, 0o700)
    os.chown(runtime, NOBODY, NOBODY)
    processes = Processes(work)
    start = processes.start

    try:
        # The session bus.
        address = start_session_bus(processes, work, demo="demo-desktop")

        # sway, headless, as nobody.
        with open(os.path.join(work, "config"), "w") as f:
            f.write("xwayland disable\noutput HEADLESS-1 resolution 1024x768\n")
        os.chmod(os.path.join(work, "config"), 0o644)
        sway_env = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_RUNTIME_DIR": runtime, "WLR_BACKENDS": "headless",
                    "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman"}
        sway = start("sway", ["/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                              "/usr/bin/sway", "-c", os.path.join(work, "config")], env=sway_env)
        ipc = os.path.join(runtime, f"sway-ipc.{NOBODY}.{sway.pid}.sock")
        wait_for("sway", lambda: os.path.exists(ipc) and os.path.exists(os.path.join(runtime, "wayland-1")))
        say("sway runs headless as nobody on wayland-1")
        session = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_RUNTIME_DIR": runtime, "WAYLAND_DISPLAY": "wayland-1",
                   "LANG": "C.UTF-8", "DBUS_SESSION_BUS_ADDRESS": address}

        # lifecycled, one app at a time, with the two apps: counter-app and its foot window.
        apps = os.path.join(work, "apps")
        os.makedirs(apps)
        for app in APPS:
            name = app.split(".")[-1]
            launcher = os.path.join(work, f"{name}.sh")
            with open(launcher, "w") as f:
                f.write(f"#!/bin/sh\n/usr/bin/foot --app-id {app} --title {name} /bin/cat &\n"
                        f"exec {build}/counter-app --host lifecycled --app-id {app} "
                        f"--state-directory {work}/{name}-state >>{work}/{name}.log 2>&1\n")
            os.chmod(launcher, 0o755)
            with open(os.path.join(apps, f"{app}.json"), "w") as f:
                json.dump({"id": app, "name": name, "executable": launcher}, f)
        with open(os.path.join(work, "lifecycled.conf"), "w") as f:
            f.write("[lifecycle]\nforeground-mode = single\nwindow-source = wayland\n")
        start("lifecycled", [f"{build}/lifecycled", "--address", address, "--apps-directory", apps,
                             "--no-host-sources", "--state-directory", f"{work}/lifecycled-state",
                             "--config", f"{work}/lifecycled.conf"], env=session)

        def lifecyclectl(*args, check=True):
            result = subprocess.run([f"{build}/lifecyclectl", *args, "--address", address], capture_output=True,
                                    text=True, env=session, timeout=30)
            if check and result.returncode != 0:
                raise SystemExit(f"demo-desktop: lifecyclectl {' '.join(args)}: {result.stderr.strip()}")
            return result.stdout.strip()

        def swaymsg(command):
            subprocess.run(["/usr/bin/swaymsg", "-s", ipc, command], check=True, capture_output=True, timeout=10)

        def describe():
            out = lifecyclectl("apps", "--json", check=False)
            return {entry["id"]: entry for entry in json.loads(out)} if out.startswith("[") else {}

        wait_for("lifecycled", lambda: lifecyclectl("status", check=False) != "")
        # This run's timeline only (the process output is appended to its file).
        open(os.path.join(output, "timeline.txt"), "w").close()
        start("monitor", [f"{build}/lifecyclectl", "monitor", "--address", address], env=session,
              log=os.path.join(output, "timeline.txt"))
        time.sleep(0.3)  # the monitor subscribes before the first launch (only what is shown depends on it)

        for app in APPS:
            lifecyclectl("activate", app)
            wait_for(f"{app} to be active with its window",
                     lambda: describe().get(app, {}).get("state") == "active"
                     and describe()[app].get("windowState") == "activated")
            say(f"{app} launched: active, its window has the focus")
        for step in range(3):
            front = APPS[step % 2]
            back = APPS[(step + 1) % 2]
            wait_for(f"{front} to be frozen", lambda: describe().get(front, {}).get("frozen"))
            say(f"the user switches to {front}")
            swaymsg(f"[app_id={front}] focus")
            wait_for(f"{front} to be active", lambda: describe().get(front, {}).get("state") == "active")
            wait_for(f"{back} to be frozen", lambda: describe().get(back, {}).get("frozen"))
            say(f"  {front} is active, thawed; {back} is suspended and frozen")

        print("\nlifecyclectl apps:")
        for line in lifecyclectl("apps").splitlines():
            print("  " + line)
        screenshot = os.path.join(output, "session.png")
        subprocess.run(["/usr/bin/grim", screenshot], check=True, env=session, timeout=30)
        say(f"screenshot of the session: {screenshot}")
        time.sleep(0.3)  # the monitor writes the last lines (only what is shown depends on it)
        print("\nThe timeline (lifecyclectl monitor):")
        for line in lines(os.path.join(output, "timeline.txt")):
            print("  " + line)
        print("\nWhat each counter-app's delegate heard:")
        for app in APPS:
            name = app.split(".")[-1]
            for line in lines(os.path.join(work, f"{name}.log")):
                if "counter-app: " in line and " state=" in line:
                    print(f"  {name}: {line.split('counter-app: ', 1)[1]}")
        print(f"\nWritten to {output}: timeline.txt, session.png")
    finally:
        processes.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
