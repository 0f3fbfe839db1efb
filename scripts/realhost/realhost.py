#!/usr/bin/python3
"""The real-host tier: AppLifecycle against a booted systemd 252, not a mock.

Boots the Debian 12 tree that make-rootfs.sh built with `systemd-nspawn --boot` (systemd as
PID 1, the system bus, logind, timedated, the user manager and a session bus from
dbus-user-session), drives it from outside with `nsenter` into the container's PID 1, and
asserts, in order, what the app or lifecyclectl reported:

  example   the example app in a real login session (systemd-run -p PAMName=login):
            lock-session/unlock-session, set-timezone, and poweroff reaching
            applicationWillTerminate while its delay inhibitors show in ListInhibitors.
            The build's binaries and the Swift toolchain are bind-mounted in.
  package   the .deb installed with `apt install ./…deb` into a container without any Swift
            toolchain; lifecyclectl status starts lifecycled by D-Bus activation through the
            user manager (Type=notify reaches active); an app launched by URL into its own
            cgroup under the delegated unit, frozen for real during a simulated sleep and thawed
            on wake; `systemctl --user stop lifecycled` ends it gracefully; the journal read back
            with `journalctl --user -u lifecycled APP_ID=…`, at each line's own priority.

  compositor
            the .deb again, now in a graphical session: sway 1.7 headless started by the user
            manager, which hands WAYLAND_DISPLAY to the user manager through sway's own shipped
            config.d; lifecycled, D-Bus activated as shipped, finds the compositor itself, in
            single-foreground mode (as on a phone) from the user's lifecycled.conf. Two apps with
            foot windows: counter-app (a Swift app) and foot alone (a program that does not adopt
            AppLifecycle). Focus moved with swaymsg sends the app behind to the background; it is
            suspended and its cgroup frozen (cgroup.events), and focusing it again thaws it.

  fleet     the README's fleet section with the packages' files only: applifecycle and
            applifecycle-examples installed with apt beside Debian's mosquitto, which runs with the
            shipped drop-in, least-privilege ACL and password recipe; the gateway started by its
            hardened system unit (a dynamic user; systemd-analyze security's exposure at most 2.0)
            with the shipped push-gateway.conf; the user's lifecycled.conf made from the shipped
            example; counter-app registers, and pywebpush on this host (the container shares its
            network) sends a push that reaches the app's delegate.

Every process it starts (nspawn) it stops by pid, even on failure: a clean poweroff first, then
SIGKILL to the container's PID 1 and to nspawn.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

USER = "tester"
UID = 1000
USER_ENV = [
    f"XDG_RUNTIME_DIR=/run/user/{UID}",
    f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{UID}/bus",
    "HOME=/home/tester",
    "PATH=/usr/local/bin:/usr/bin:/bin",
]


class Failure(Exception):
    """A scenario's assertion failed."""


def log(message):
    print(f"realhost: {message}", flush=True)


class Container:
    """One booted container, its nspawn process and its PID 1, stopped by pid."""

    def __init__(self, root, name, binds, results):
        self.root = root
        self.name = name
        self.binds = binds
        self.results = results
        self.nspawn = None
        self.leader = None
        self.log_path = os.path.join(results, f"{name}-nspawn.log")

    def start(self):
        arguments = [
            "systemd-nspawn", "--boot", f"--directory={self.root}", "--volatile=overlay",
            "--register=no", "--keep-unit", f"--machine={self.name}", "--console=passive",
            f"--bind={self.results}:/results",
        ]
        for source, target in self.binds:
            arguments.append(f"--bind-ro={source}:{target}")
        self.nspawn = subprocess.Popen(
            arguments, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while self.leader is None:
            if self.nspawn.poll() is not None:
                raise Failure(f"systemd-nspawn exited with {self.nspawn.returncode}: {self.tail()}")
            if time.monotonic() > deadline:
                raise Failure(f"no container PID 1 after 30 s: {self.tail()}")
            self.leader = self.find_leader()
            time.sleep(0.1)
        # PID 1 exists before it listens: until /run/systemd/private is up, systemctl cannot connect
        # and prints nothing (seen under load). Ask again until it answers; --wait then waits for
        # the end of the boot.
        def booted():
            answer = self.run(["systemctl", "is-system-running", "--wait"], check=False, timeout=90)
            return answer.stdout.strip() or None

        state = self.wait_for("the container's systemd to answer", booted, timeout=90)
        if state not in ("running", "degraded"):
            raise Failure(f"the container's systemd is {state!r}")
        if state == "degraded":
            failed = self.run(["systemctl", "--failed", "--no-legend", "--plain"], check=False).stdout
            log(f"{self.name}: degraded; failed units: {failed.strip()}")
        log(f"{self.name}: booted, systemd is {state} (PID 1 is {self.leader} on this host)")

    def find_leader(self):
        """The descendant of nspawn that is PID 1 of the new pid namespace (`NSpid: <pid> 1`)."""
        queue = [self.nspawn.pid]
        while queue:
            pid = queue.pop(0)
            try:
                with open(f"/proc/{pid}/status") as status:
                    for line in status:
                        if line.startswith("NSpid:"):
                            ids = line.split()[1:]
                            if pid != self.nspawn.pid and len(ids) >= 2 and ids[-1] == "1":
                                return pid
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as children:
                        queue.extend(int(child) for child in children.read().split())
            except (FileNotFoundError, ProcessLookupError):
                continue
        return None

    def tail(self):
        try:
            with open(self.log_path) as handle:
                return " | ".join(handle.read().strip().splitlines()[-5:])
        except OSError:
            return ""

    def run(self, command, user=False, check=True, timeout=60, stdin=None):
        """Runs a command inside the container (as root, or as the test user with its session bus)."""
        if user:
            command = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--init-groups", "env", *USER_ENV, *command]
        full = ["nsenter", f"--target={self.leader}", "--all", "--", *command]
        result = subprocess.run(full, capture_output=True, text=True, timeout=timeout, input=stdin)
        if check and result.returncode != 0:
            raise Failure(
                f"`{' '.join(command)}` exited with {result.returncode}: {result.stderr.strip() or result.stdout.strip()}")
        return result

    def wait_for(self, what, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise Failure(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.2)

    def poweroff(self, timeout=60):
        """`systemctl poweroff` inside, then waits for nspawn to exit; returns its status."""
        self.run(["systemctl", "--no-block", "poweroff"], check=False)
        try:
            return self.nspawn.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"the container did not power off within {timeout} s")

    def save_journal(self):
        """Copies the container's journal into the results, for the report of a failed scenario."""
        if self.leader is None or self.nspawn is None or self.nspawn.poll() is not None:
            return
        try:
            journal = self.run(["journalctl", "-b", "--no-pager", "-o", "short-monotonic"], check=False, timeout=20)
            with open(os.path.join(self.results, f"{self.name}-journal.log"), "w") as handle:
                handle.write(journal.stdout[-6000:])
        except (subprocess.TimeoutExpired, OSError):
            pass

    def stop(self):
        """Stops the container by pid whatever state it is in (the cleanup of a failed run)."""
        if self.nspawn is None or self.nspawn.poll() is not None:
            return
        if self.leader:
            try:
                subprocess.run(["nsenter", f"--target={self.leader}", "--all", "--", "systemctl", "--no-block",
                                "poweroff"], capture_output=True, timeout=10)
                self.nspawn.wait(timeout=30)
                return
            except (subprocess.TimeoutExpired, OSError):
                pass
            try:
                os.kill(self.leader, signal.SIGKILL)  # ends every process of its pid namespace
            except ProcessLookupError:
                pass
        try:
            self.nspawn.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.nspawn.kill()
            self.nspawn.wait()


def open_session(container):
    """A real logind session for the test user; returns its id and object path."""
    container.run(["systemd-run", "--unit=realhost-session", "-p", "PAMName=login", "-p", f"User={USER}",
                   "/bin/sleep", "infinity"])

    def session():
        out = container.run(["loginctl", "list-sessions", "--no-legend"], check=False).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[2] == USER:
                return fields[0]
        return None

    session_id = container.wait_for("a logind session for the test user", session)
    path = container.run(["busctl", "call", "org.freedesktop.login1", "/org/freedesktop/login1",
                          "org.freedesktop.login1.Manager", "GetSession", "s", session_id]).stdout.split()[-1].strip('"')
    container.wait_for("the user's session bus", lambda: container.run(
        ["test", "-S", f"/run/user/{UID}/bus"], check=False).returncode == 0)
    return session_id, path


def read_lines(path):
    try:
        with open(path) as handle:
            return [json.loads(line) for line in handle if line.startswith("{")]
    except FileNotFoundError:
        return []


def expect_in_order(entries, wanted, what):
    """Each of `wanted` ((kind, name) pairs) appears in `entries`, in this order."""
    position = 0
    names = [(entry.get("kind"), entry.get("name")) for entry in entries]
    for item in wanted:
        try:
            position = names.index(item, position) + 1
        except ValueError:
            raise Failure(f"{what}: {item[1]} missing after position {position}; saw {[n for _, n in names]}")


def scenario_example(root, build, toolchain, results):
    """The example app under a real session."""
    container = Container(root, "applifecycle-example", [(build, "/opt/applifecycle/build"),
                                                         (toolchain, toolchain)], results)
    output = os.path.join(results, "example.jsonl")
    try:
        container.start()
        # polkit is D-Bus activated; started first, logind's check of the app's Inhibit call does not
        # wait for its start (a desktop has it running long before an app starts).
        container.run(["systemctl", "start", "polkit.service"], timeout=60)
        container.run([
            "systemd-run", "--unit=realhost-example", "-p", "PAMName=login", "-p", f"User={USER}",
            "-p", "StandardOutput=file:/results/example.jsonl", "-p", "StandardError=journal",
            "/opt/applifecycle/build/lifecycle-example", "--host", "systemd", "--trace-json",
        ])
        did_become_active = ("delegate", "applicationDidBecomeActive(_:)")
        container.wait_for("the app to become active", lambda: did_become_active in [
            (e.get("kind"), e.get("name")) for e in read_lines(output)], timeout=60)
        # The session pam_systemd opened for the app, from its environment.
        app_pid = container.run(["systemctl", "show", "-p", "MainPID", "--value", "realhost-example"]).stdout.strip()
        environ = container.run(["cat", f"/proc/{app_pid}/environ"]).stdout.split("\0")
        app_session = next((v.split("=", 1)[1] for v in environ if v.startswith("XDG_SESSION_ID=")), None)
        if not app_session:
            raise Failure(f"the app (pid {app_pid}) has no XDG_SESSION_ID")
        session_path = container.run(["busctl", "call", "org.freedesktop.login1", "/org/freedesktop/login1",
                                      "org.freedesktop.login1.Manager", "GetSession", "s", app_session]
                                     ).stdout.split()[-1].strip('"')
        # logind escapes the id in the path: session 1 is session/_31, never session/c1 or session/auto.
        if session_path != "/org/freedesktop/login1/session/_3" + app_session[0] + app_session[1:]:
            raise Failure(f"session {app_session} is at {session_path}")
        log(f"example: the app (pid {app_pid}) runs in session {app_session} at {session_path}")

        def held_inhibitors():
            listing = container.run(["busctl", "--json=short", "call", "org.freedesktop.login1",
                                     "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                     "ListInhibitors"]).stdout
            held = [entry for entry in json.loads(listing)["data"][0] if entry[1] == "lifecycle-example"]
            delays = [entry[0] for entry in held if entry[3] == "delay"]
            return held if any("sleep" in what for what in delays) and any("shutdown" in what for what in delays) else None

        held = container.wait_for("the app's sleep and shutdown delay inhibitors in ListInhibitors", held_inhibitors)
        log(f"example: ListInhibitors shows the app's delay inhibitors: {[(e[0], e[3]) for e in held]}")

        def count(name):
            return sum(1 for e in read_lines(output) if e.get("name") == name)

        resigned = count("applicationWillResignActive(_:)")
        container.run(["loginctl", "lock-session", app_session])
        container.wait_for("willResignActive after lock-session",
                           lambda: count("applicationWillResignActive(_:)") > resigned)
        active = count("applicationDidBecomeActive(_:)")
        container.run(["loginctl", "unlock-session", app_session])
        container.wait_for("didBecomeActive after unlock-session",
                           lambda: count("applicationDidBecomeActive(_:)") > active)
        changes = count("applicationSignificantTimeChange(_:)")
        container.run(["timedatectl", "set-timezone", "Asia/Tokyo"])
        container.wait_for("significantTimeChange after set-timezone",
                           lambda: count("applicationSignificantTimeChange(_:)") > changes)
        status = container.poweroff()
        log(f"example: the container powered off (nspawn exited with {status})")
        entries = read_lines(output)
        expect_in_order(entries, [
            ("delegate", "application(_:didFinishLaunchingWithOptions:)"),
            ("delegate", "applicationDidBecomeActive(_:)"),
            ("delegate", "applicationProtectedDataWillBecomeUnavailable(_:)"),
            ("delegate", "applicationWillResignActive(_:)"),
            ("delegate", "applicationProtectedDataDidBecomeAvailable(_:)"),
            ("delegate", "applicationDidBecomeActive(_:)"),
            ("delegate", "applicationSignificantTimeChange(_:)"),
            ("delegate", "applicationWillTerminate(_:)"),
        ], "example app")
        log("example: PASS launch → active → lock → unlock → time-zone change → poweroff → willTerminate")
    except Exception:
        container.save_journal()
        raise
    finally:
        container.stop()


def lifecyclectl(container, *arguments, check=True):
    return container.run(["lifecyclectl", *arguments], user=True, check=check)


def stage_package(deb, counter):
    """A directory with the .deb and counter-app, bind-mounted at /opt/applifecycle; the caller removes it."""
    debs = tempfile.mkdtemp(prefix="realhost-debs-")
    os.chmod(debs, 0o755)  # the test user runs the app from it
    shutil.copy(deb, debs)
    shutil.copy(counter, os.path.join(debs, "counter-app"))
    return debs


def install_package(container, deb):
    """`apt install ./…deb` from /opt/applifecycle inside the container."""
    installed = container.run(["sh", "-c", f"cd /opt/applifecycle && apt-get install -y ./{os.path.basename(deb)}"],
                              check=False, timeout=120)
    if installed.returncode != 0:
        raise Failure(f"apt install ./{os.path.basename(deb)} failed: {installed.stdout[-1500:]} {installed.stderr[-1500:]}")


def scenario_package(root, deb, counter, toolchain, results):
    """The .deb on a Debian without Swift: activation, cgroups, freezing, a graceful stop, the journal."""
    debs = stage_package(deb, counter)
    container = Container(root, "applifecycle-package", [(debs, "/opt/applifecycle")], results)
    try:
        container.start()
        if container.run(["test", "-e", toolchain], check=False).returncode == 0:
            raise Failure("the package scenario must run without a Swift toolchain")
        install_package(container, deb)
        log(f"package: installed {os.path.basename(deb)} with apt")
        for page, title in (("man8/lifecycled.8.gz", "LIFECYCLED(8)"), ("man1/lifecyclectl.1.gz", "LIFECYCLECTL(1)")):
            man = container.run(["man", "-l", f"/usr/share/man/{page}"], check=False)
            if title not in man.stdout:
                raise Failure(f"man -l {page} does not show {title}: {man.stderr}")
        completion = container.run(["bash", "-c", "source /usr/share/bash-completion/completions/lifecyclectl"
                                    " && complete -p lifecyclectl"], check=False)
        if "lifecyclectl" not in completion.stdout:
            raise Failure(f"the bash completion does not register: {completion.stdout} {completion.stderr}")
        log("package: man -l shows lifecycled(8) and lifecyclectl(1); the bash completion registers")
        # The simulated sleep: logind cannot suspend a container, so the installed unit gets a
        # drop-in that lets lifecyclectl inject the same host facts.
        container.run(["mkdir", "-p", "/etc/systemd/user/lifecycled.service.d"])
        container.run(["sh", "-c", "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/lifecycled --enable-simulate\\n'"
                       " > /etc/systemd/user/lifecycled.service.d/realhost-simulate.conf"])
        apps = "/home/tester/.local/share/applifecycle/apps"
        manifest = json.dumps({"id": "org.example.Counter", "name": "Counter", "executable": "/opt/applifecycle/counter-app",
                               "arguments": [], "urlSchemes": ["counter"]})
        bogus = json.dumps({"id": "not an id", "executable": "/bin/true"})
        container.run(["sh", "-c",
                       f"mkdir -p {apps} && cat > {apps}/org.example.Counter.json && echo '{bogus}' > {apps}/bogus.json"],
                      user=True, stdin=manifest)
        open_session(container)

        if container.run(["systemctl", "--user", "is-active", "lifecycled"], user=True, check=False).stdout.strip() == "active":
            raise Failure("lifecycled runs before anything asked for it")
        status = lifecyclectl(container, "status")
        if not status.stdout.startswith("lifecycled: running as :"):
            raise Failure(f"lifecyclectl status did not report a running daemon: {status.stdout}")
        def unit():
            state = container.run(["systemctl", "--user", "show", "lifecycled",
                                   "-p", "ActiveState,Type,ControlGroup,MainPID"], user=True).stdout
            return dict(line.split("=", 1) for line in state.strip().splitlines())

        # READY=1 follows the name: the unit may still be activating when status has answered.
        properties = container.wait_for("lifecycled.service (Type=notify) to reach active",
                                        lambda: (u := unit()).get("ActiveState") == "active" and u, timeout=20)
        if properties.get("Type") != "notify":
            raise Failure(f"lifecycled.service is not a Type=notify unit: {properties}")
        log(f"package: lifecyclectl status activated lifecycled ({status.stdout.splitlines()[0]}); unit {properties}")

        opened = lifecyclectl(container, "open", "counter://increment")
        if "org.example.Counter" not in opened.stdout:
            raise Failure(f"lifecyclectl open did not name the app: {opened.stdout} {opened.stderr}")

        def app():
            apps_json = json.loads(lifecyclectl(container, "apps", "--json").stdout)
            return next((a for a in apps_json if a["id"] == "org.example.Counter"), None)

        running = container.wait_for("the counter app to run", lambda: (a := app()) and a["pid"] and a["state"] == "active" and a)
        pid = running["pid"]
        cgroup = container.run(["cat", f"/proc/{pid}/cgroup"]).stdout
        unified = next(line[3:] for line in cgroup.splitlines() if line.startswith("0::"))
        if not re.search(r"/lifecycled\.service/app-org\.example\.Counter[^/]*$", unified):
            raise Failure(f"the app is not in its own cgroup under the delegated unit: {unified}")
        log(f"package: the app (pid {pid}) runs in {unified}")
        mount = container.run(["findmnt", "-n", "-t", "cgroup2", "-o", "TARGET"]).stdout.split()[0]
        freeze = f"{mount}{unified}/cgroup.events"

        def frozen():
            events = container.run(["cat", freeze]).stdout
            return re.search(r"^frozen (\d)", events, re.M).group(1) == "1"

        lifecyclectl(container, "simulate", "sleep")
        container.wait_for("the app's cgroup to freeze during sleep", frozen)
        suspended = app()["state"]
        if suspended != "suspended":
            raise Failure(f"the frozen app's state is {suspended}, not suspended")
        log("package: simulated sleep froze the app's cgroup (cgroup.events frozen 1, state suspended)")
        # A local notification scheduled through lifecyclectl fires while the app is frozen: the
        # banner goes to the session's notification server (python-dbusmock's notification_daemon,
        # a user unit) without waking the app.
        container.run(["systemd-run", "--user", "--unit=realhost-notifications", "python3", "-m", "dbusmock",
                       "--session", "--template", "notification_daemon"], user=True)

        def notify_calls():
            out = container.run(["busctl", "--user", "call", "org.freedesktop.Notifications",
                                 "/org/freedesktop/Notifications", "org.freedesktop.DBus.Mock", "GetMethodCalls",
                                 "s", "Notify"], user=True, check=False).stdout
            return out if out.startswith("a(tav)") else None

        container.wait_for("the notification server to answer", notify_calls, timeout=20)
        scheduled = lifecyclectl(container, "notify", "org.example.Counter", "--in", "2", "--title", "Stretch",
                                 "--body", "Stand up for a minute", "--id", "realhost-reminder")
        if "realhost-reminder" not in scheduled.stdout:
            raise Failure(f"lifecyclectl notify did not schedule: {scheduled.stdout} {scheduled.stderr}")
        listed = json.loads(lifecyclectl(container, "notifications", "org.example.Counter", "--json").stdout)
        if listed.get("identifier") != "realhost-reminder":
            raise Failure(f"lifecyclectl notifications does not list it: {listed}")
        banner = container.wait_for("the banner to reach the notification server",
                                    lambda: (c := notify_calls()) and "Stretch" in c and c, timeout=20)
        if "org.example.Counter" not in banner:
            raise Failure(f"the banner does not name the app's desktop entry: {banner}")
        if not frozen() or app()["state"] != "suspended":
            raise Failure("the banner woke the frozen app")
        if lifecyclectl(container, "notifications", "--json").stdout.strip():
            raise Failure("the notification is still scheduled after it fired")
        log("package: a notification scheduled with lifecyclectl fired while the app was frozen; the banner reached "
            "the session's notification server and the app stayed frozen")
        container.run(["systemctl", "--user", "stop", "realhost-notifications"], user=True, check=False)

        lifecyclectl(container, "simulate", "wake")
        container.wait_for("the app's cgroup to thaw on wake", lambda: not frozen())
        container.wait_for("the app to be active again", lambda: app()["state"] == "active")
        log("package: wake thawed it and it became active again")

        container.run(["systemctl", "--user", "stop", "lifecycled"], user=True, timeout=60)
        result = container.run(["systemctl", "--user", "show", "lifecycled",
                                "-p", "Result,ActiveState"], user=True).stdout
        if "Result=success" not in result or "ActiveState=inactive" not in result:
            raise Failure(f"systemctl --user stop lifecycled did not end it cleanly: {result}")
        if container.run(["kill", "-0", str(pid)], check=False).returncode == 0:
            raise Failure(f"the app (pid {pid}) outlived lifecycled")
        log("package: systemctl --user stop lifecycled ended the app and the daemon (Result=success)")

        journal = container.run(["journalctl", "--user", "-u", "lifecycled", "APP_ID=org.example.Counter",
                                 "-o", "json", "--no-pager"], user=True).stdout
        entries = [json.loads(line) for line in journal.splitlines() if line.startswith("{")]
        if not entries or any(e.get("APP_ID") != "org.example.Counter" for e in entries):
            raise Failure(f"journalctl APP_ID=org.example.Counter gave {len(entries)} entries: {journal[:500]}")
        messages = [e["MESSAGE"] for e in entries]
        # The app's whole life, in order, from lifecycled's lines about it alone.
        position = 0
        for wanted in ("launched org.example.Counter as pid", "org.example.Counter: inactive -> active",
                       "org.example.Counter: background -> suspended", "suspended", "resumed",
                       "org.example.Counter: suspended -> background", "org.example.Counter: inactive -> active",
                       "terminating: SIGTERM", "org.example.Counter: inactive -> not-running",
                       "org.example.Counter (pid"):
            found = next((i for i in range(position, len(messages)) if messages[i].startswith(wanted)), None)
            if found is None:
                raise Failure(f"no journal entry '{wanted}…' after entry {position} for the app: {messages}")
            position = found + 1
        stamped = [m for m in messages if re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d", m)]
        if stamped:
            raise Failure(f"entries carry a second timestamp: {stamped[:3]}")
        launched = next(e for e in entries if e["MESSAGE"].startswith("launched org.example.Counter"))
        if launched.get("PRIORITY") != "6" or launched.get("SYSLOG_IDENTIFIER") != "lifecycled" or not launched.get("CODE_FILE"):
            raise Failure(f"the launch entry lacks its fields: {launched}")
        everything = container.run(["journalctl", "_SYSTEMD_USER_UNIT=lifecycled.service", "SYSLOG_IDENTIFIER=lifecycled",
                                    "-o", "json", "--no-pager"]).stdout
        rejected = [json.loads(line) for line in everything.splitlines()
                    if line.startswith("{") and "manifest rejected" in line]
        if not rejected or rejected[0].get("PRIORITY") != "4":
            raise Failure(f"the rejected manifest's warning is not at priority 4: {rejected[:1]}")
        log(f"package: journalctl --user -u lifecycled APP_ID=org.example.Counter: {len(entries)} entries, one "
            "timestamp each, priority 6 for info and 4 for the rejected manifest's warning")
        container.poweroff()
    except Exception:
        container.save_journal()
        raise
    finally:
        container.stop()
        shutil.rmtree(debs, ignore_errors=True)


def scenario_compositor(root, deb, counter, results):
    """The .deb under a real compositor: sway decides which app is in front, lifecycled freezes the rest."""
    debs = stage_package(deb, counter)
    container = Container(root, "applifecycle-compositor", [(debs, "/opt/applifecycle")], results)
    home = "/home/tester"
    try:
        container.start()
        install_package(container, deb)
        apps = f"{home}/.local/share/applifecycle/apps"
        counter_manifest = json.dumps({"id": "org.example.Counter", "name": "Counter",
                                       "executable": f"{home}/counter.sh"})
        term_manifest = json.dumps({"id": "org.example.Term", "name": "Terminal", "executable": "/usr/bin/foot",
                                    "arguments": ["--app-id", "org.example.Term", "--title", "Terminal", "/bin/cat"],
                                    "adoptsLifecycle": False})
        # counter-app and its window: a foot started by the app's launcher, in the app's cgroup.
        launcher = ("#!/bin/sh\n/usr/bin/foot --app-id org.example.Counter --title Counter /bin/cat &\n"
                    "exec /opt/applifecycle/counter-app\n")
        settings = "[lifecycle]\nforeground-mode = single\nfreeze-delay = 1\n"
        sway_config = "xwayland disable\noutput HEADLESS-1 resolution 1024x768\ninclude /etc/sway/config.d/*\n"
        container.run(["sh", "-c",
                       f"mkdir -p {apps} {home}/.config/applifecycle && cat > {apps}/org.example.Counter.json"
                       f" && echo '{term_manifest}' > {apps}/org.example.Term.json"
                       f" && printf '{launcher}' > {home}/counter.sh && chmod +x {home}/counter.sh"
                       f" && printf '{settings}' > {home}/.config/applifecycle/lifecycled.conf"
                       f" && printf '{sway_config}' > {home}/sway.config"],
                      user=True, stdin=counter_manifest)
        open_session(container)
        container.run(["systemd-run", "--user", "--unit=realhost-sway", "-E", "WLR_BACKENDS=headless",
                       "-E", "WLR_LIBINPUT_NO_DEVICES=1", "-E", "WLR_RENDERER=pixman",
                       "/usr/bin/sway", "-c", f"{home}/sway.config"], user=True)

        def manager_environment():
            out = container.run(["systemctl", "--user", "show-environment"], user=True, check=False).stdout
            return "WAYLAND_DISPLAY=" in out and out

        environment = container.wait_for("sway's config.d to hand WAYLAND_DISPLAY to the user manager",
                                         manager_environment, timeout=30)
        display = next(line for line in environment.splitlines() if line.startswith("WAYLAND_DISPLAY="))
        log(f"compositor: sway runs headless as a user unit; the user manager has {display}")
        if container.run(["systemctl", "--user", "is-active", "lifecycled"], user=True, check=False).stdout.strip() == "active":
            raise Failure("lifecycled runs before anything asked for it")
        lifecyclectl(container, "status")

        def swaymsg(command):
            socket = container.run(["sh", "-c", f"ls /run/user/{UID}/sway-ipc.*.sock"], user=True).stdout.split()[0]
            container.run(["swaymsg", "-s", socket, command], user=True)

        def apps_now():
            return {a["id"]: a for a in json.loads(lifecyclectl(container, "apps", "--json").stdout)}

        mount = container.run(["findmnt", "-n", "-t", "cgroup2", "-o", "TARGET"]).stdout.split()[0]

        def frozen(app):
            pid = apps_now()[app]["pid"]
            cgroup = container.run(["cat", f"/proc/{pid}/cgroup"], check=False).stdout
            unified = next((line[3:] for line in cgroup.splitlines() if line.startswith("0::")), None)
            if not unified or "/app-" not in unified:
                raise Failure(f"{app} (pid {pid}) is not in a cgroup of its own: {cgroup}")
            events = container.run(["cat", f"{mount}{unified}/cgroup.events"]).stdout
            return re.search(r"^frozen (\d)", events, re.M).group(1) == "1"

        lifecyclectl(container, "activate", "org.example.Counter")
        container.wait_for("Counter to be active with its window in front", lambda: (
            a := apps_now().get("org.example.Counter", {})).get("state") == "active"
            and a.get("windowState") == "activated", timeout=40)
        log("compositor: Counter launched; sway reports its window activated, the app is active")
        lifecyclectl(container, "activate", "org.example.Term")
        container.wait_for("the terminal's window in front", lambda: apps_now().get(
            "org.example.Term", {}).get("windowState") == "activated", timeout=40)
        container.wait_for("Counter, behind, to be suspended and frozen", lambda: (
            a := apps_now()["org.example.Counter"]).get("state") == "suspended" and a.get("frozen")
            and frozen("org.example.Counter"), timeout=30)
        log(f"compositor: the terminal took the focus; Counter is suspended and its cgroup frozen "
            f"({apps_now()['org.example.Counter'].get('reason', '')})")
        swaymsg("[app_id=org.example.Counter] focus")
        container.wait_for("Counter to be thawed and active", lambda: (
            a := apps_now()["org.example.Counter"]).get("state") == "active" and not a.get("frozen")
            and not frozen("org.example.Counter"), timeout=30)
        container.wait_for("the terminal, a plain program behind, to be frozen", lambda: apps_now()[
            "org.example.Term"].get("frozen") and frozen("org.example.Term"), timeout=30)
        log("compositor: swaymsg focus brought Counter back thawed and active; foot, which knows nothing of "
            "AppLifecycle, is frozen behind it")
        swaymsg("[app_id=org.example.Term] focus")
        container.wait_for("the terminal to be thawed", lambda: not apps_now()["org.example.Term"].get("frozen")
                           and not frozen("org.example.Term"), timeout=30)
        log("compositor: focusing the terminal thawed it")
        journal = container.run(["journalctl", "--user", "-u", "lifecycled", "-o", "cat", "--no-pager"],
                                user=True).stdout
        if "wayland" not in journal.lower():
            raise Failure(f"lifecycled's journal does not name the Wayland window source: {journal[-1500:]}")
        container.run(["systemctl", "--user", "stop", "lifecycled"], user=True, timeout=60)
        container.run(["systemctl", "--user", "stop", "realhost-sway"], user=True, check=False, timeout=30)
        container.poweroff()
    except Exception:
        container.save_journal()
        raise
    finally:
        container.stop()
        shutil.rmtree(debs, ignore_errors=True)


def scenario_fleet(root, debs_paths, webpush_python, results):
    """The fleet as an operator installs it, with the packages' files only (the README's fleet section)."""
    debs = tempfile.mkdtemp(prefix="realhost-debs-")
    os.chmod(debs, 0o755)
    for path in debs_paths:
        shutil.copy(path, debs)
    container = Container(root, "applifecycle-fleet", [(debs, "/opt/applifecycle")], results)
    examples = "/usr/share/doc/applifecycle/examples"
    home = "/home/tester"
    device = "realhost-device"
    try:
        container.start()
        names = " ".join(f"./{os.path.basename(path)}" for path in debs_paths)
        installed = container.run(["sh", "-c", f"cd /opt/applifecycle && apt-get install -y {names}"],
                                  check=False, timeout=120)
        if installed.returncode != 0:
            raise Failure(f"apt install {names} failed: {installed.stdout[-1500:]} {installed.stderr[-1500:]}")
        for page, title in (("man8/lifecycle-push-gateway.8.gz", "LIFECYCLE-PUSH-GATEWAY(8)"),
                            ("man5/lifecycled.conf.5.gz", "LIFECYCLED.CONF(5)")):
            man = container.run(["man", "-l", f"/usr/share/man/{page}"], check=False)
            if title not in man.stdout:
                raise Failure(f"man -l {page} does not show {title}: {man.stderr}")
        log(f"fleet: installed {names} with apt; man -l shows lifecycle-push-gateway(8) and lifecycled.conf(5)")

        # The broker, as the README says: the shipped drop-in, ACL and password recipe.
        container.run(["sh", "-c", f"cd {examples}/mosquitto"
                       " && install -m 0644 applifecycle.conf /etc/mosquitto/conf.d/applifecycle.conf"
                       " && install -m 0644 applifecycle.acl /etc/mosquitto/applifecycle.acl"])
        users = container.run(["sh", f"{examples}/mosquitto/applifecycle-broker-users", device]).stdout
        passwords = dict(line.split(": ", 1) for line in users.splitlines() if ": " in line)
        if device not in passwords:
            raise Failure(f"applifecycle-broker-users printed no password for {device}: {users}")
        container.run(["systemctl", "restart", "mosquitto"])
        container.wait_for("mosquitto with the shipped configuration", lambda: container.run(
            ["systemctl", "is-active", "mosquitto"], check=False).stdout.strip() == "active", timeout=20)
        log("fleet: mosquitto runs with the shipped applifecycle.conf, ACL and password file")

        # The gateway: its system unit with the shipped configuration file.
        container.run(["systemctl", "enable", "--now", "lifecycle-push-gateway"])

        last_answer = []

        def health():
            try:
                with urllib.request.urlopen("http://127.0.0.1:8080/health", timeout=2) as answer:
                    text = answer.read().decode()
                    return "connected" in text and text
            except OSError as error:
                last_answer[:] = [repr(error)]
                return None

        try:
            container.wait_for("the packaged gateway to answer /health connected to the broker", health, timeout=30)
        except Failure as failure:
            status = container.run(["systemctl", "status", "--no-pager", "lifecycle-push-gateway"], check=False)
            raise Failure(f"{failure}; last answer {last_answer}; {status.stdout[-1500:]}")
        unit = container.run(["systemctl", "show", "lifecycle-push-gateway",
                              "-p", "ActiveState,DynamicUser,MainPID"]).stdout.split()
        pid = next(item.split("=", 1)[1] for item in unit if item.startswith("MainPID="))
        user = container.run(["ps", "-o", "user=", "-p", pid]).stdout.strip()
        if user == "root" or "DynamicUser=yes" not in unit:
            raise Failure(f"the gateway does not run as a dynamic user: {unit}, user {user}")
        exposure = container.run(["systemd-analyze", "security", "--no-pager", "lifecycle-push-gateway.service"],
                                 check=False).stdout
        score = re.search(r"Overall exposure level for lifecycle-push-gateway.service: ([0-9.]+) (\w+)", exposure)
        if not score or float(score.group(1)) > 2.0:
            raise Failure(f"systemd-analyze security: the gateway is too exposed: {exposure[-1500:]}")
        log(f"fleet: the gateway runs from its unit as {user} (DynamicUser), /health: {health().strip()}; "
            f"systemd-analyze security: {score.group(1)} {score.group(2)}")

        # The device: the user's lifecycled.conf from the shipped example, its password, the example app.
        container.run(["sh", "-c",
                       f"mkdir -p {home}/.config/applifecycle && cd {home}/.config/applifecycle"
                       f" && sed -e 's/^device-id = .*/device-id = {device}/'"
                       f" -e 's|^password-file = .*|password-file = {home}/.config/applifecycle/broker-password|'"
                       f" {examples}/lifecycled.conf > lifecycled.conf"
                       f" && (umask 077 && cat > broker-password)"], user=True, stdin=passwords[device] + "\n")
        open_session(container)
        # No restart first: lifecycled.conf was written before the session (and its lifecycled)
        # started, and an app launched by the call that activates lifecycled finds its distributor.
        lifecyclectl(container, "activate", "org.example.Counter")
        token_path = f"{home}/.local/state/counter-app/device-token.json"
        try:
            token = container.wait_for("counter-app's device token (it registered through lifecycled and the broker)",
                                       lambda: container.run(["cat", token_path], check=False).stdout, timeout=30)
        except Failure as failure:
            journal = container.run(["journalctl", "--user", "-u", "lifecycled", "-o", "cat", "--no-pager"],
                                    user=True, check=False).stdout
            apps = lifecyclectl(container, "apps", check=False).stdout
            raise Failure(f"{failure}; lifecyclectl apps: {apps}; lifecycled's journal: {journal[-2500:]}")
        subscription = json.loads(token)
        if not subscription["endpoint"].startswith("http://127.0.0.1:8080/push/"):
            raise Failure(f"the endpoint is not the gateway's: {subscription}")
        log(f"fleet: counter-app registered; its endpoint is {subscription['endpoint'][:48]}...")

        # The app server: pywebpush, from outside the container, to the gateway's public URL.
        payload = json.dumps({"aps": {"alert": "Hello from the fleet"}, "increment": 5})
        sent = subprocess.run([webpush_python, "-c", "import json, sys\nfrom pywebpush import webpush\n"
                               "answer = webpush(json.loads(sys.argv[1]), sys.argv[2], ttl=60)\n"
                               "print(answer.status_code)", token, payload],
                              capture_output=True, text=True, timeout=60)
        if sent.returncode != 0 or sent.stdout.strip() != "201":
            raise Failure(f"pywebpush did not get 201 from the gateway: {sent.stdout} {sent.stderr[-1500:]}")

        def received():
            journal = container.run(["journalctl", "--user", "-u", "lifecycled", "-o", "cat", "--no-pager"],
                                    user=True, check=False).stdout
            return next((line for line in journal.splitlines()
                         if "didReceiveRemoteNotification" in line and "Hello from the fleet" in line), None)

        line = container.wait_for("the push to reach counter-app's delegate", received, timeout=30)
        log(f"fleet: pywebpush → gateway (201) → mosquitto → lifecycled → counter-app: {line.strip()[:160]}")
        container.run(["systemctl", "--user", "stop", "lifecycled"], user=True, timeout=60)
        container.poweroff()
    except Exception:
        container.save_journal()
        raise
    finally:
        container.stop()
        shutil.rmtree(debs, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--build", required=True, help="the debug products directory (lifecycle-example)")
    parser.add_argument("--toolchain", default="/opt/swift")
    parser.add_argument("--deb", required=True)
    parser.add_argument("--counter-app", required=True, help="counter-app built with --static-swift-stdlib")
    parser.add_argument("--examples-deb", required=True, help="applifecycle-examples, for the fleet scenario")
    parser.add_argument("--webpush-python", required=True, help="the venv's python with pywebpush (webpush-venv.sh)")
    parser.add_argument("--only", choices=["example", "package", "compositor", "fleet"])
    arguments = parser.parse_args()
    results = tempfile.mkdtemp(prefix="realhost-results-")
    os.chmod(results, 0o777)
    scenarios = [("example", lambda: scenario_example(arguments.root, arguments.build, arguments.toolchain, results)),
                 ("package", lambda: scenario_package(arguments.root, arguments.deb, arguments.counter_app,
                                                          arguments.toolchain, results)),
                 ("compositor", lambda: scenario_compositor(arguments.root, arguments.deb, arguments.counter_app,
                                                            results)),
                 ("fleet", lambda: scenario_fleet(arguments.root, [arguments.deb, arguments.examples_deb],
                                                  arguments.webpush_python, results))]
    failed = []
    for name, scenario in scenarios:
        if arguments.only and name != arguments.only:
            continue
        started = time.monotonic()
        try:
            scenario()
            log(f"{name}: passed in {time.monotonic() - started:.1f} s")
        except Exception as error:  # any failure of a scenario is reported, and the next one still runs
            failed.append(name)
            log(f"{name}: FAILED after {time.monotonic() - started:.1f} s: {error}")
            for path in sorted(os.listdir(results)):
                with open(os.path.join(results, path), errors="replace") as handle:
                    text = handle.read()[-3000:]
                log(f"--- {path} (last 3000 characters)\n{text}")
    shutil.rmtree(results, ignore_errors=True)
    if failed:
        log(f"FAILED: {', '.join(failed)}")
        return 1
    log("every scenario passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
