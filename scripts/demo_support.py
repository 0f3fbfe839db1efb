"""What the demos (demo-push.py, demo-desktop.py, demo-fetch.py) share: the timeline's clock, bounded waits,
private session and system buses, and the processes they start, each stopped by its own pid."""
import os
import subprocess
import time

T0 = time.monotonic()


def say(text):
    """One line of the demo's timeline, with the seconds since it started."""
    print(f"[{time.monotonic() - T0:6.2f}s] {text}", flush=True)


def wait_for(what, condition, timeout=20, demo="demo"):
    """Polls `condition` until it holds; exits naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise SystemExit(f"{demo}: timed out waiting for {what}")


def lines(path):
    """The lines of a file, or none while it does not exist."""
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


class Processes:
    """The processes a demo starts, their output in `work`; `stop()` ends each by its own pid."""

    def __init__(self, work):
        self.work = work
        self.started = []

    def start(self, name, argv, env, log=None):
        out = open(log or os.path.join(self.work, name + ".log"), "a")
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        self.started.append((name, process))
        return process

    def stop(self):
        """SIGTERM to each, newest first, SIGKILL after 10 s."""
        for _, process in reversed(self.started):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def start_session_bus(processes, work, demo="demo"):
    """A private dbus-daemon for the demo's session; returns its address."""
    return start_bus(processes, work, "bus", "session", demo)


def start_bus(processes, work, name, kind, demo="demo"):
    """A private dbus-daemon of `kind` (session or system), its socket `work/name`; returns its address."""
    socket_path = os.path.join(work, name)
    config = os.path.join(work, name + ".conf")
    with open(config, "w") as f:
        f.write(f"""<busconfig><type>{kind}</type><listen>unix:path={socket_path}</listen>
<auth>EXTERNAL</auth><policy context="default"><allow user="*"/><allow own="*"/>
<allow send_type="method_call"/><allow send_type="signal"/><allow send_type="method_return"/>
<allow send_type="error"/><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
</policy></busconfig>""")
    processes.start("dbus-daemon-" + name, ["/usr/bin/dbus-daemon", "--config-file", config, "--nofork",
                                             "--nopidfile"], env=dict(os.environ))
    wait_for("the " + kind + " bus", lambda: os.path.exists(socket_path), demo=demo)
    return "unix:path=" + socket_path
