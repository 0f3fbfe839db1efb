#!/usr/bin/python3
"""Fault-injection campaigns against the real lifecycled, lifecycle-push-gateway and mosquitto
(scripts/faults/README.md). `make faults` builds and runs them all; run one or more by name:

    scripts/faults/faults.py --build .build/debug push-kills bus-death
    scripts/faults/faults.py --build .build/debug --json --scale 0.1 dbus-fuzz

Each campaign prints one summary line (and with --json one JSON object per campaign, with the
details); the exit status is 1 if any campaign found a defect or could not run.
"""
import argparse
import json
import os
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bus_death  # noqa: E402
import dbus_fuzz  # noqa: E402
import other_uid  # noqa: E402
import push_kills  # noqa: E402
import rig as R  # noqa: E402
import schedule_kills  # noqa: E402

CAMPAIGNS = ["push-kills", "bus-death", "other-uid", "dbus-fuzz", "schedule-kills"]


def summary_line(result):
    name = result["campaign"]
    keys = {
        "push-kills": ["acknowledged", "delivered", "lost", "duplicates", "kills", "seconds"],
        "bus-death": ["repetitions", "exited_1", "prompt", "apps_gone", "failed", "seconds"],
        "other-uid": ["calls", "refused", "not_refused", "seconds"],
        "dbus-fuzz": ["calls", "replies", "errors", "no_reply", "lifecycled_up", "seconds"],
        "schedule-kills": ["acknowledged", "listed", "lost", "kills", "full_disk_acknowledged",
                           "full_disk_lost", "seconds"],
    }.get(name, [])
    parts = ", ".join(f"{k.replace('_', ' ')} {result.get(k)}" for k in keys)
    verdict = "ok" if result.get("ok") else "FAILED"
    return f"{name}: {parts} [{verdict}]"


def provenance(build):
    """Which binaries ran: the tree's commit, whether its sources differ from it, lifecycled's hash."""
    import hashlib
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def git(*arguments):
        result = subprocess.run(["git", "-C", root, *arguments], capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else "?"
    dirty = git("status", "--short", "--", "Sources")
    digest = "?"
    try:
        with open(os.path.join(build, "lifecycled"), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        pass
    return (f"binaries: {build} (lifecycled sha256 {digest}), tree {git('rev-parse', '--short', 'HEAD')}"
            f"{', Sources modified' if dirty else ''}")


def option(given, default):
    return default if given is None else given


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("campaigns", nargs="*", help=f"some of {', '.join(CAMPAIGNS)} (default: all, in that order)")
    parser.add_argument("--build", default=".build/debug", help="the directory with the built binaries")
    parser.add_argument("--json", action="store_true", help="print each campaign's details as a JSON line")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every campaign's size by this")
    parser.add_argument("--seed", type=int, help="the random seed (default: a new one, printed)")
    parser.add_argument("--keep", action="store_true", help="keep each campaign's work directory and logs")
    parser.add_argument("--pushes", type=int, help="push-kills: how many pushes (default 5000 x scale)")
    parser.add_argument("--kills", type=int, help="push-kills and schedule-kills: how many SIGKILLs")
    parser.add_argument("--window", type=float,
                        help="push-kills: seconds to send over; schedule-kills: seconds to kill over")
    args = parser.parse_args()
    chosen = args.campaigns or CAMPAIGNS
    for name in chosen:
        if name not in CAMPAIGNS:
            parser.error(f"unknown campaign {name!r}; choose from {', '.join(CAMPAIGNS)}")
    build = os.path.abspath(args.build)
    s = args.scale
    runners = {
        "push-kills": lambda: push_kills.run(
            build, pushes=option(args.pushes, max(10, int(5000 * s))), kills=option(args.kills, max(1, int(30 * s))),
            seconds=option(args.window, max(5.0, 90.0 * s)), seed=args.seed, keep=args.keep),
        "bus-death": lambda: bus_death.run(build, repetitions=max(1, int(20 * s)), seed=args.seed, keep=args.keep),
        "other-uid": lambda: other_uid.run(build, keep=args.keep),
        "dbus-fuzz": lambda: dbus_fuzz.run(build, calls=max(100, int(20000 * s)), seed=args.seed, keep=args.keep),
        "schedule-kills": lambda: schedule_kills.run(
            build, kills=option(args.kills, max(2, int(50 * s))), seconds=option(args.window, max(10.0, 120.0 * s)),
            seed=args.seed, keep=args.keep),
    }
    print(provenance(build), flush=True)
    failed = False
    for name in chosen:
        started = time.monotonic()
        try:
            result = runners[name]()
        except Exception as error:  # a broken rig is reported, and the next campaign still runs
            result = {"campaign": name, "ok": False, "error": f"{type(error).__name__}: {error}",
                      "traceback": traceback.format_exc(), "seconds": round(time.monotonic() - started, 1)}
        failed = failed or not result.get("ok")
        line = summary_line(result)
        if "error" in result:
            line += f" error: {result['error']}"
        print(line, flush=True)
        if args.json:
            print(json.dumps(result, sort_keys=True), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
