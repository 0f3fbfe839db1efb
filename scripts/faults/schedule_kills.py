"""schedule-kills: a notification whose ScheduleNotification was answered with success survives a
SIGKILL (issue 16, defect 2), with room on the disk and without.

1. Kills: schedule_client.py schedules notifications (far-future fire dates, four apps with
   manifests) as fast as lifecycled answers, while lifecycled is SIGKILLed K times at random moments
   and started again. After the last kill and restart, ListNotifications("") must list every
   identifier that got a success reply.
2. Full disk: the state directory is a small tmpfs (mounted here, unmounted after). Some
   notifications are scheduled, then the tmpfs is filled to the last byte; in each of several rounds
   more are scheduled, lifecycled is SIGKILLed and restarted, and everything acknowledged so far
   must be listed. A success reply while the disk is full is allowed only if it survives (the
   expected answer is an error, NotSaved). Then the filler is removed: scheduling must succeed again
   and survive a last kill.
"""
import os
import random
import signal
import subprocess
import time

import dbus

import rig as R

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = [f"org.example.Scheduled{n}" for n in range(4)]


def listed(connection):
    """{(app, identifier)} of ListNotifications("")."""
    lifecycled = dbus.Interface(connection.get_object(R.LIFECYCLED_BUS_NAME, R.LIFECYCLED_PATH),
                                R.LIFECYCLED_INTERFACE)
    return {(str(n.get("app", "")), str(n["identifier"])) for n in lifecycled.ListNotifications("", timeout=60)}


def client_lines(path):
    acked, errors = set(), {}
    for line in R.read_lines(path):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ack":
            acked.add((parts[1], parts[2]))
        elif len(parts) == 4 and parts[0] == "err":
            errors[parts[1]] = errors.get(parts[1], 0) + 1
    return acked, errors


def start_client(rig, address, prefix, count, log):
    return rig.start(f"client-{prefix}", ["/usr/bin/python3", os.path.join(HERE, "schedule_client.py"), prefix,
                                          str(count)] + APPS, env={"DBUS_SESSION_BUS_ADDRESS": address}, log=log)


def restart(rig, daemon, connection, address, apps, state, sig=signal.SIGKILL):
    rig.stop(daemon, sig)
    R.wait_for("lifecycled's name to be released", lambda: not R.name_owner(connection, R.LIFECYCLED_BUS_NAME))
    daemon = rig.start_lifecycled(address, apps, state)
    R.wait_for("lifecycled to own its name", lambda: R.name_owner(connection, R.LIFECYCLED_BUS_NAME), 30)
    return daemon


def kills_phase(rig, address, connection, kills, seconds, rng):
    apps, state = rig.path("apps"), rig.path("state")
    for app in APPS:
        R.write_manifest(apps, app, "/usr/bin/true")
    daemon = rig.start_lifecycled(address, apps, state)
    R.wait_for("lifecycled to own its name", lambda: R.name_owner(connection, R.LIFECYCLED_BUS_NAME))
    log = rig.path("client-kills.log")
    client = start_client(rig, address, "k", 10_000_000, log)
    mean_gap = seconds / kills
    for _ in range(kills):
        time.sleep(rng.uniform(0.05, 2 * mean_gap))
        rig.stop(daemon, signal.SIGKILL)
        R.wait_for("lifecycled's name to be released", lambda: not R.name_owner(connection, R.LIFECYCLED_BUS_NAME))
        time.sleep(rng.uniform(0, 0.2))
        daemon = rig.start_lifecycled(address, apps, state)
    R.wait_for("lifecycled to own its name", lambda: R.name_owner(connection, R.LIFECYCLED_BUS_NAME), 30)
    time.sleep(1.0)  # the client schedules against the last lifecycled for a moment
    rig.stop(client)
    # The final kill and restart: what is listed now was read from the disk.
    daemon = restart(rig, daemon, connection, address, apps, state)
    acked, errors = client_lines(log)
    found = listed(connection)
    lost = acked - found
    rig.stop(daemon)
    return {"acknowledged": len(acked), "listed": len(found), "lost": len(lost), "lost_samples": sorted(lost)[:10],
            "listed_not_acknowledged": len(found - acked), "kills": kills + 1, "client_errors": errors}


def full_disk_phase(rig, address, connection, rounds, per_round, size_kib):
    apps, state = rig.path("apps"), rig.path("tmpfs-state")
    os.makedirs(state)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "faults-tmpfs", state], check=True)
    try:
        return full_disk_rounds(rig, address, connection, apps, state, rounds, per_round, size_kib)
    finally:
        rig.stop_all()  # nothing may hold the tmpfs open
        subprocess.run(["umount", state], check=False)


def fill(path):
    """Writes a filler file until the file system has no byte left; returns its size."""
    written = 0
    with open(path, "wb", buffering=0) as f:
        for chunk in (65536, 4096, 512, 64, 1):
            block = b"\0" * chunk
            while True:
                try:
                    f.write(block)
                    written += chunk
                except OSError:
                    break
    return written


def full_disk_rounds(rig, address, connection, apps, state, rounds, per_round, size_kib):
    daemon = rig.start_lifecycled(address, apps, state, log=rig.path("lifecycled-full.log"))
    R.wait_for("lifecycled to own its name", lambda: R.name_owner(connection, R.LIFECYCLED_BUS_NAME))
    logs = []

    def schedule(prefix, count):
        log = rig.path(f"client-{prefix}.log")
        logs.append(log)
        client = start_client(rig, address, prefix, count, log)
        client.wait(timeout=120)
        rig.stop(client)
        return client_lines(log)

    before, _ = schedule("room", per_round)
    filler = os.path.join(state, "filler")
    filled = fill(filler)
    acked_full, errors_full, rounds_detail = set(), {}, []
    everything = set(before)
    lost = set()
    for r in range(rounds):
        acked, errors = schedule(f"full{r}", per_round)
        acked_full |= acked
        everything |= acked
        for name, count in errors.items():
            errors_full[name] = errors_full.get(name, 0) + count
        daemon = restart(rig, daemon, connection, address, apps, state)
        found = listed(connection)
        lost |= everything - found
        rounds_detail.append({"acknowledged": len(acked), "errors": errors, "listed": len(found)})
    os.unlink(filler)
    after, errors_after = schedule("freed", per_round)
    everything |= after
    daemon = restart(rig, daemon, connection, address, apps, state)
    found = listed(connection)
    lost |= everything - found
    rig.stop(daemon)
    return {"full_disk_tmpfs_kib": size_kib, "full_disk_filler_bytes": filled,
            "full_disk_acknowledged_before": len(before), "full_disk_attempted_while_full": rounds * per_round,
            "full_disk_acknowledged": len(acked_full), "full_disk_errors_while_full": errors_full,
            "full_disk_acknowledged_after_freeing": len(after), "full_disk_errors_after_freeing": errors_after,
            "full_disk_lost": len(lost), "full_disk_lost_samples": sorted(lost)[:10],
            "full_disk_kills": rounds + 1, "full_disk_rounds": rounds_detail}


def run(build, kills=50, seconds=120.0, seed=None, keep=False, full_rounds=5, per_round=20, tmpfs_kib=512):
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    started = time.monotonic()
    with R.Rig("schedule-kills", build, keep=keep) as rig:
        _, address = rig.start_bus()
        connection = R.bus_connection(address)
        result = {"campaign": "schedule-kills", "seed": seed, "kill_window_seconds": seconds}
        result.update(kills_phase(rig, address, connection, kills, seconds, rng))
        result.update(full_disk_phase(rig, address, connection, full_rounds, per_round, tmpfs_kib))
        result["seconds"] = round(time.monotonic() - started, 1)
        result["ok"] = (result["lost"] == 0 and result["full_disk_lost"] == 0 and result["acknowledged"] > 0
                        and result["full_disk_acknowledged_before"] == per_round
                        and result["full_disk_acknowledged_after_freeing"] == per_round)
        return result
