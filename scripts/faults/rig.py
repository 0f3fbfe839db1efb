"""What every fault campaign needs: a private work directory, copies of the built binaries, a private
dbus-daemon, a mosquitto broker, lifecycle-push-gateway and lifecycled, each started here and stopped
by its own pid (never by name).

Nothing here touches the user's session bus, broker or state: everything listens on loopback or on
a socket in the campaign's temporary directory.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

LIFECYCLED_BUS_NAME = "org.applifecycle.Lifecycled1"
LIFECYCLED_PATH = "/org/applifecycle/Lifecycled1"
LIFECYCLED_INTERFACE = "org.applifecycle.Lifecycled1"
DISTRIBUTOR_BUS_NAME = "org.unifiedpush.Distributor.applifecycle"
DISTRIBUTOR_PATH = "/org/unifiedpush/Distributor"

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONNECTOR_SCRIPT = os.path.join(SCRIPTS, "test", "unifiedpush-connector.py")
BINARIES = ("lifecycled", "lifecycle-push-gateway", "lifecyclectl")


class CampaignError(Exception):
    """A campaign could not run (a process did not come up): not a finding, a broken rig."""


def wait_for(what, condition, timeout=20.0, interval=0.02):
    """Polls `condition` until it is true; raises CampaignError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise CampaignError(f"timed out after {timeout:g} s waiting for {what}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


class Rig:
    """One campaign's directory and processes. Use as a context manager: leaving it stops every
    process it started (SIGTERM, then SIGKILL after 10 s), by pid, and removes the directory unless
    `keep` is set."""

    def __init__(self, name, build, keep=False):
        self.name = name
        self.keep = keep
        self.work = tempfile.mkdtemp(prefix=f"faults-{name}-")
        os.chmod(self.work, 0o755)
        self.processes = []
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin)
        # Other agents rebuild .build while a campaign runs: run private copies.
        for binary in BINARIES:
            source = os.path.join(build, binary)
            if not os.path.exists(source):
                raise CampaignError(f"{source} is not built (swift build)")
            shutil.copy2(source, os.path.join(self.bin, binary))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop_all()
        if not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        return False

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def binary(self, name):
        return os.path.join(self.bin, name)

    # -- processes ---------------------------------------------------------------------------

    def start(self, name, argv, env=None, log=None, preexec_fn=None):
        out = open(log or self.path(name + ".log"), "ab")
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={**os.environ, **(env or {})}, preexec_fn=preexec_fn)
        out.close()
        self.processes.append((name, process))
        return process

    def stop(self, process, sig=signal.SIGTERM, timeout=10.0):
        """Stops one process this rig started, by its pid; returns its exit status."""
        if process.poll() is None:
            try:
                os.kill(process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        self.processes = [(n, p) for (n, p) in self.processes if p is not process]
        return process.returncode

    def stop_all(self):
        for _, process in reversed(list(self.processes)):
            self.stop(process)

    # -- the session bus -------------------------------------------------------------------------

    def start_bus(self, name="bus", limits=""):
        """A private dbus-daemon on a socket in the work directory that lets any uid connect (as
        SystemdBusTesting's PrivateBus does); returns (process, address)."""
        socket_path = self.path(name + ".socket")
        config = self.path(name + ".conf")
        with open(config, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={socket_path}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/>
<allow send_type="method_call"/><allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
<allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/>
<allow receive_type="error"/><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/></policy>
{limits}</busconfig>""")
        process = self.start(name, ["/usr/bin/dbus-daemon", "--config-file", config, "--nofork", "--nopidfile"])
        wait_for("dbus-daemon", lambda: os.path.exists(socket_path) or process.poll() is not None, 10)
        if process.poll() is not None:
            raise CampaignError(f"dbus-daemon exited: {read_lines(self.path(name + '.log'))[-5:]}")
        os.chmod(socket_path, 0o777)
        return process, "unix:path=" + socket_path

    # -- mosquitto -------------------------------------------------------------------------------

    def start_broker(self, users):
        """mosquitto on a free loopback port with the tests' configuration (MosquittoBroker.swift):
        password file, the fleet ACL, persistence. Returns (process, port)."""
        directory = self.path("mosquitto")
        os.makedirs(os.path.join(directory, "data"), exist_ok=True)
        passwords = os.path.join(directory, "passwd")
        open(passwords, "w").close()
        os.chmod(passwords, 0o600)
        for user, password in sorted(users.items()):
            subprocess.run(["/usr/bin/mosquitto_passwd", "-b", passwords, user, password], check=True)
        acl = os.path.join(directory, "acl")
        with open(acl, "w") as f:
            f.write("pattern readwrite applifecycle/v1/%u/#\n\nuser gateway\n"
                    "topic read applifecycle/v1/+/registrations/#\ntopic write applifecycle/v1/+/push\n\n"
                    "user operator\ntopic read applifecycle/v1/#\n")
        os.chmod(acl, 0o600)
        port = free_port()
        config = os.path.join(directory, "mosquitto.conf")
        with open(config, "w") as f:
            f.write(f"listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {passwords}\n"
                    f"acl_file {acl}\npersistence true\npersistence_location {directory}/data/\n"
                    "autosave_interval 1\nmax_queued_messages 100000\nmax_inflight_messages 100\n"
                    f"log_dest file {directory}/mosquitto.log\nlog_type error\nlog_type warning\n"
                    "log_type notice\nuser root\n")
        process = self.start("mosquitto", ["/usr/sbin/mosquitto", "-c", config])
        wait_for("mosquitto to listen", lambda: port_open(port) or process.poll() is not None, 10)
        if process.poll() is not None:
            raise CampaignError("mosquitto exited at start")
        return process, port

    # The fleet's MQTT users: the device, the gateway and an operator, as the README's ACL has them.
    FLEET_USERS = {"device-one": "pw-device", "gateway": "pw-gateway", "operator": "pw-operator"}

    def start_fleet_broker(self, endpoint_url="http://127.0.0.1:9", extra_broker_lines=""):
        """Starts mosquitto with the fleet's users and writes the device's lifecycled.conf for it.

        Returns (mosquitto process, its port, the lifecycled.conf path)."""
        process, port = self.start_broker(self.FLEET_USERS)
        config = self.path("lifecycled.conf")
        with open(config, "w") as f:
            f.write(f"[broker]\nurl = mqtt://127.0.0.1:{port}\nusername = device-one\npassword = pw-device\n"
                    f"device-id = device-one\n{extra_broker_lines}\n[push]\nendpoint-url = {endpoint_url}\n")
        return process, port, config

    # -- lifecycled ------------------------------------------------------------------------------

    def lifecycled_argv(self, address, apps, state, config=None, extra=()):
        argv = [self.binary("lifecycled"), "--address", address, "--apps-directory", apps, "--no-host-sources",
                "--app-cgroups", "off", "--state-directory", state]
        if config:
            argv += ["--config", config]
        return argv + list(extra)

    def start_lifecycled(self, address, apps, state, config=None, extra=(), log=None):
        return self.start("lifecycled", self.lifecycled_argv(address, apps, state, config, extra),
                          env={"DBUS_SESSION_BUS_ADDRESS": address}, log=log or self.path("lifecycled.log"))


def write_manifest(apps, app_id, executable, arguments=(), name=None):
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, app_id + ".json"), "w") as f:
        json.dump({"id": app_id, "name": name or app_id, "executable": executable, "arguments": list(arguments)}, f)


def bus_connection(address):
    """A private dbus-python connection (no main loop: blocking calls only)."""
    import dbus
    return dbus.bus.BusConnection(address)


def name_owner(connection, name):
    import dbus
    try:
        return str(connection.get_name_owner(name))
    except dbus.exceptions.DBusException:
        return None


def process_ended(pid):
    """Whether a pid no longer names a running process (gone, or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat[stat.rindex(")") + 1:].strip().startswith("Z")
