#!/usr/bin/env python3
"""Writes dist/lifecycled.order: the functions lifecycled runs from its start to idle, first run first.

`make dist-binaries` compiles every function into a section of its own and links lifecycled with
lld's --symbol-ordering-file set to this file, so the code an idle daemon has run sits together at
the start of its text instead of on pages spread over all 12 MB of it. The kernel maps the file
pages around each one a process touches (fault-around, 64 KiB), so with the code scattered an idle
lifecycled had 9 MiB of its text resident for about 1 MB of functions it ran. (The Swift runtime's
and FoundationEssentials' prebuilt archives keep some large sections whole, so part of them stays.)

The list comes from callgrind (valgrind): lifecycled on a private bus, --no-host-sources, one app
registered with RegisterApp as `lifecycle-bench idle` does, then idle for --seconds. Functions the
list names that a later build no longer has are ignored by the linker, and new ones land where the
linker puts them anyway, so a stale list costs memory, not correctness; `make dist-order`
regenerates it, and `lifecycle-bench idle` shows what it buys.

Usage: scripts/lifecycled-order.py --lifecycled .build-dist/release/lifecycled [--output FILE] [--seconds N]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BUS_NAME = "org.applifecycle.Lifecycled1"
OBJECT_PATH = "/org/applifecycle/Lifecycled1"


def run_under_callgrind(binary, work, seconds):
    """Runs lifecycled under callgrind until it is idle; returns the callgrind output's path."""
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address=unix:path={work}/bus"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = bus.stdout.readline().strip()
        os.makedirs(f"{work}/apps")
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, XDG_CONFIG_HOME=f"{work}/config",
                           SWIFT_BACKTRACE="enable=no")
        output = f"{work}/callgrind.out"
        daemon = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={output}", binary,
             "--address", address, "--no-host-sources", "--apps-directory", f"{work}/apps",
             "--state-directory", f"{work}/state"],
            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while True:
                owned = subprocess.run(
                    ["dbus-send", f"--bus={address}", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                     "org.freedesktop.DBus.NameHasOwner", f"string:{BUS_NAME}"],
                    capture_output=True, text=True)
                if "boolean true" in owned.stdout:
                    break
                if daemon.poll() is not None or time.monotonic() > deadline:
                    sys.exit("lifecycled did not take its name under valgrind")
                time.sleep(0.5)
            subprocess.run(
                ["dbus-send", f"--bus={address}", "--print-reply", f"--dest={BUS_NAME}", OBJECT_PATH,
                 f"{BUS_NAME}.RegisterApp", "string:org.example.BenchApp"],
                check=True, capture_output=True)
            time.sleep(seconds)
        finally:
            daemon.terminate()
            daemon.wait()
        return output
    finally:
        bus.terminate()
        bus.wait()


def executed_functions(callgrind_output, binary):
    """The executable's functions in the order callgrind first lists them."""
    objects, functions, current_object = {}, {}, None
    executed, seen = [], set()
    name_line = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")
    for line in open(callgrind_output, encoding="utf-8", errors="replace"):
        match = name_line.match(line.rstrip("\n"))
        if not match:
            continue
        kind, index, name = match.groups()
        if kind in ("ob", "cob"):
            if name:
                objects[index] = name
            if kind == "ob":
                current_object = objects[index]
        elif kind == "fn":
            if name:
                functions[index] = name
            # A recursive call's function is listed as name'2.
            function = functions[index].split("'")[0]
            if current_object == binary and function not in seen:
                seen.add(function)
                executed.append(function)
        elif name:
            functions[index] = name
    return executed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifecycled", required=True, help="the dist build of lifecycled")
    parser.add_argument("--output", default="dist/lifecycled.order")
    parser.add_argument("--seconds", type=float, default=10, help="idle time after RegisterApp")
    arguments = parser.parse_args()
    for tool in ("valgrind", "dbus-daemon", "dbus-send", "strip", "nm"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing (make dist-order installs valgrind)")
    work = tempfile.mkdtemp(prefix="lifecycled-order-")
    try:
        binary = f"{work}/lifecycled"
        # valgrind cannot read the toolchain's DWARF; the symbol table is all it needs here.
        subprocess.run(["strip", "--strip-debug", "-o", binary, arguments.lifecycled], check=True)
        executed = executed_functions(run_under_callgrind(binary, work, arguments.seconds), binary)
        defined = set()
        for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] in "tTwW":
                defined.add(fields[2])
        order = [function for function in executed if function in defined]
        if len(order) < 1000:
            sys.exit(f"only {len(order)} functions of lifecycled ran under callgrind; not writing {arguments.output}")
        with open(arguments.output, "w", encoding="utf-8") as file:
            file.write("".join(f"{function}\n" for function in order))
        print(f"{arguments.output}: {len(order)} functions")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
