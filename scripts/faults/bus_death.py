"""bus-death: lifecycled must not outlive its session bus (issue 16, defect 5).

Each repetition starts a fresh private dbus-daemon, lifecycled and one hosted app (hosted_app.py,
which does not leave on its own when the bus goes), then takes the bus away in one of two ways:

- killed: the dbus-daemon is SIGKILLed;
- dropped: the bus disconnects lifecycled and stays up. The bus runs with a small
  max_message_size (64 KiB), a same-uid client schedules four 20 KB notifications for an app that
  is not running (each call fits) and asks ListNotifications: the reply does not fit, and
  dbus-daemon drops a connection that sends an oversized message.

Then lifecycled must exit with status 1 within `prompt_seconds`, and the app's process must be gone.
"""
import os
import random
import signal
import time

import dbus

import rig as R

HOSTED_APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hosted_app.py")
APP_ID = "org.example.BusDeath"
# The bus's message limit in the "dropped" mode, and notifications of an app that is not running
# whose list overflows it in one reply.
SMALL_MESSAGE_LIMIT = 65536
BALLAST_APP = "org.example.Ballast"
BALLAST_NOTIFICATIONS = 4
BALLAST_BYTES = 20000


def one(build, mode, index, prompt_seconds, keep):
    reply = None
    with R.Rig(f"bus-death-{mode}", build, keep=keep) as rig:
        limits = f'<limit name="max_message_size">{SMALL_MESSAGE_LIMIT}</limit>' if mode == "dropped" else ""
        bus, address = rig.start_bus(limits=limits)
        apps = rig.path("apps")
        app_log = rig.path("app.log")
        R.write_manifest(apps, APP_ID, "/usr/bin/python3", [HOSTED_APP, app_log])
        if mode == "dropped":
            R.write_manifest(apps, BALLAST_APP, "/usr/bin/true")
        daemon = rig.start_lifecycled(address, apps, rig.path("state"))
        client = R.bus_connection(address)
        R.wait_for("lifecycled to own its name", lambda: R.name_owner(client, R.LIFECYCLED_BUS_NAME))
        proxy = client.get_object(R.LIFECYCLED_BUS_NAME, R.LIFECYCLED_PATH)
        lifecycled = dbus.Interface(proxy, R.LIFECYCLED_INTERFACE)
        lifecycled.Launch(APP_ID, dbus.Dictionary({}, signature="sv"))

        def app_pid():
            for entry in lifecycled.ListApps():
                if str(entry[0]) == APP_ID and str(entry[1]) == "active" and int(entry[3]) > 0:
                    return int(entry[3])
            return None
        R.wait_for("the app to be active", app_pid, 20, 0.05)
        pid = app_pid()

        fault_at = time.monotonic()
        if mode == "killed":
            rig.stop(bus, signal.SIGKILL)
        else:
            # Each call fits the bus's limit; the list of all of them does not.
            far = dbus.Struct(("date", dbus.Double(4102444800.0, variant_level=1)), signature="sv")
            for n in range(BALLAST_NOTIFICATIONS):
                notification = {"identifier": f"ballast-{n}", "fireDate": far, "alertBody": "ballast",
                                "userInfo": dbus.Dictionary({"ballast": "x" * BALLAST_BYTES}, signature="sv")}
                lifecycled.ScheduleNotification(BALLAST_APP, dbus.Dictionary(notification, signature="sv"))
            fault_at = time.monotonic()
            try:
                lifecycled.ListNotifications("", timeout=10)
                reply = "answered"  # the limit did not bite: the campaign's premise failed
            except dbus.exceptions.DBusException as error:
                reply = error.get_dbus_name()
        status = None
        try:
            status = daemon.wait(timeout=prompt_seconds)
        except Exception:
            pass
        exit_seconds = time.monotonic() - fault_at
        if status is None:
            # Not prompt: give it a while more to see whether it ever exits, then stop it.
            try:
                status = daemon.wait(timeout=20)
            except Exception:
                status = None
            exit_seconds = time.monotonic() - fault_at
        app_gone = R.process_ended(pid)
        if not app_gone:
            os.kill(pid, signal.SIGKILL)  # the app lifecycled started and left behind: stopped by pid
        bus_alive = bus.poll() is None
        rig.stop(daemon, signal.SIGKILL)
        rig.stop_all()
        tail = R.read_lines(rig.path("lifecycled.log"))[-3:]
        return {
            "mode": mode, "index": index, "exit_status": status, "exit_seconds": round(exit_seconds, 3),
            "prompt": status is not None and exit_seconds <= prompt_seconds, "app_gone": app_gone,
            "bus_still_up": bus_alive, "trigger_reply": reply,
            "lifecycled_log_tail": tail,
        }


def run(build, repetitions=20, prompt_seconds=10.0, seed=None, keep=False):
    seed = seed if seed is not None else random.randrange(1 << 30)
    started = time.monotonic()
    runs = []
    for i in range(repetitions):
        runs.append(one(build, "killed" if i % 2 == 0 else "dropped", i, prompt_seconds, keep))
    failures = [r for r in runs if r["exit_status"] != 1 or not r["prompt"] or not r["app_gone"]
                or (r["mode"] == "dropped" and (not r["bus_still_up"] or r["trigger_reply"] == "answered"))]

    def median(mode):
        values = sorted(r["exit_seconds"] for r in runs if r["mode"] == mode)
        return values[len(values) // 2] if values else None
    times = sorted(r["exit_seconds"] for r in runs)
    result = {
        "campaign": "bus-death", "seed": seed, "repetitions": len(runs),
        "killed": sum(1 for r in runs if r["mode"] == "killed"),
        "dropped": sum(1 for r in runs if r["mode"] == "dropped"),
        "exited_1": sum(1 for r in runs if r["exit_status"] == 1),
        "prompt": sum(1 for r in runs if r["prompt"]), "prompt_limit_seconds": prompt_seconds,
        "apps_gone": sum(1 for r in runs if r["app_gone"]), "failed": len(failures),
        "exit_seconds_median": times[len(times) // 2] if times else None,
        "exit_seconds_max": times[-1] if times else None,
        "exit_seconds_median_killed": median("killed"), "exit_seconds_median_dropped": median("dropped"),
        "trigger_replies": sorted({str(r["trigger_reply"]) for r in runs if r["mode"] == "dropped"}),
        "exit_statuses": sorted({str(r["exit_status"]) for r in runs}),
        "failures": failures[:5], "seconds": round(time.monotonic() - started, 1),
    }
    result["ok"] = not failures
    return result
