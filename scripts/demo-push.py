#!/usr/bin/python3
"""make demo-push: remote notifications end to end, on this machine alone.

  lifecyclectl push ──Web Push (RFC 8030/8291)──► lifecycle-push-gateway ──QoS 1──► mosquitto
        ──► lifecycled (UnifiedPush distributor, persistent MQTT session) ──► counter-app

A private session bus, a mosquitto broker with its own users and ACL on a loopback port, the gateway
and lifecycled with counter-app. The push is sent once while counter-app is suspended (it wakes into
the background for it and is suspended again) and once while it is not running (lifecycled launches
it in the background with the push in its launch options). Every process is stopped by its own pid.
"""
import argparse
import json
import os
import socket
import subprocess
import tempfile

from demo_support import Processes, lines, say, start_session_bus
from demo_support import wait_for as wait_for_any


def wait_for(what, condition, timeout=20):
    wait_for_any(what, condition, timeout, demo="demo-push")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the directory with the built products")
    build = parser.parse_args().build
    work = tempfile.mkdtemp(prefix="demo-push-")
    processes = Processes(work)

    def start(name, argv, env=None, log=None):
        return processes.start(name, argv, env={**os.environ, **(env or {})}, log=log)

    try:
        # The session bus.
        address = start_session_bus(processes, work, demo="demo-push")
        env = {"DBUS_SESSION_BUS_ADDRESS": address}

        # The broker: persistence, no anonymous access, one user per device, the gateway, an operator.
        mqtt_port = free_port()
        passwords = os.path.join(work, "passwd")
        open(passwords, "w").close()
        os.chmod(passwords, 0o600)
        users = {"demo-device": "device-secret", "gateway": "gateway-secret", "operator": "operator-secret"}
        for user, password in users.items():
            subprocess.run(["/usr/bin/mosquitto_passwd", "-b", passwords, user, password], check=True)
        with open(os.path.join(work, "acl"), "w") as f:
            f.write("pattern readwrite applifecycle/v1/%u/#\n"
                    "user gateway\ntopic read applifecycle/v1/+/registrations/#\ntopic write applifecycle/v1/+/push\n"
                    "user operator\ntopic read applifecycle/v1/#\n")
        os.makedirs(os.path.join(work, "mosquitto-data"))
        with open(os.path.join(work, "mosquitto.conf"), "w") as f:
            f.write(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous false\npassword_file {passwords}\n"
                    f"acl_file {work}/acl\npersistence true\npersistence_location {work}/mosquitto-data/\n"
                    f"log_dest file {work}/mosquitto.log\nuser root\n")
        start("mosquitto", ["/usr/sbin/mosquitto", "-c", os.path.join(work, "mosquitto.conf")])
        broker = f"mqtt://127.0.0.1:{mqtt_port}"

        def port_open(port):
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0
        wait_for("mosquitto", lambda: port_open(mqtt_port))
        say(f"mosquitto listens on {broker}")

        # The gateway.
        http_port = free_port()
        gateway = f"http://127.0.0.1:{http_port}"
        for user in ["gateway", "operator"]:
            with open(os.path.join(work, user + ".password"), "w") as f:
                f.write(users[user] + "\n")
        start("gateway", [f"{build}/lifecycle-push-gateway", "--listen", f"127.0.0.1:{http_port}", "--public-url",
                          gateway, "--broker", broker, "--username", "gateway", "--password-file",
                          os.path.join(work, "gateway.password")])
        wait_for("the gateway", lambda: port_open(http_port))
        say(f"lifecycle-push-gateway listens on {gateway}")

        # lifecycled with counter-app.
        apps = os.path.join(work, "apps")
        os.makedirs(apps)
        counter_log = os.path.join(work, "counter.log")
        state = os.path.join(work, "counter-state")
        launcher = os.path.join(work, "counter.sh")
        with open(launcher, "w") as f:
            f.write(f"#!/bin/sh\nXDG_STATE_HOME={work}/xdg exec {build}/counter-app --host lifecycled "
                    f"--state-directory {state} >>{counter_log} 2>&1\n")
        os.chmod(launcher, 0o755)
        with open(os.path.join(apps, "org.example.Counter.json"), "w") as f:
            json.dump({"id": "org.example.Counter", "name": "Counter", "executable": launcher}, f)
        with open(os.path.join(work, "lifecycled.conf"), "w") as f:
            f.write(f"[broker]\nurl = {broker}\nusername = demo-device\npassword = device-secret\n"
                    f"device-id = demo-device\n\n[push]\nendpoint-url = {gateway}\n")
        start("lifecycled", [f"{build}/lifecycled", "--address", address, "--apps-directory", apps,
                             "--no-host-sources", "--enable-simulate", "--state-directory", f"{work}/lifecycled-state",
                             "--config", f"{work}/lifecycled.conf"], env=env)
        ctl = [f"{build}/lifecyclectl"]

        def lifecyclectl(*arguments, check=True):
            result = subprocess.run(ctl + list(arguments), capture_output=True, text=True, env={**os.environ, **env},
                                    timeout=30)
            if check and result.returncode != 0:
                raise SystemExit(f"demo-push: lifecyclectl {' '.join(arguments)}: {result.stderr.strip()}")
            return result.stdout.strip()

        wait_for("lifecycled", lambda: lifecyclectl("status", check=False) != "")
        start("monitor", ctl + ["monitor", "--address", address], env=env, log=os.path.join(work, "timeline.log"))

        def counter_state():
            for line in lifecyclectl("apps", "--address", address, check=False).splitlines():
                if line.startswith("org.example.Counter"):
                    return line.split()[1] if len(line.split()) > 1 else ""
            return ""

        def callbacks():
            return [line.split("counter-app: ", 1)[1] for line in lines(counter_log) if "counter-app: " in line]

        # 1. Launch: counter-app registers for remote notifications and saves its device token.
        lifecyclectl("activate", "--address", address, "org.example.Counter")
        token = os.path.join(state, "device-token.json")
        wait_for("the device token", lambda: os.path.exists(token))
        with open(token) as f:
            say(f"counter-app's device token (a Push API subscription): {f.read()}")

        # 2. Suspended: the machine sleeps; the push wakes the app into the background, then it is suspended again.
        lifecyclectl("simulate", "--address", address, "sleep")
        wait_for("counter-app to be suspended", lambda: counter_state() == "suspended")
        say("counter-app is suspended (its process is stopped); sending a push")
        before = len(callbacks())
        say(lifecyclectl("push", "--gateway", gateway, "@" + token,
                         '{"aps":{"alert":"Counted while you slept"},"increment":1}'))
        wait_for("the push", lambda: any("didReceiveRemoteNotification" in c for c in callbacks()[before:]))
        wait_for("counter-app to be suspended again", lambda: counter_state() == "suspended")
        for line in callbacks()[before:]:
            say("  counter-app: " + line)
        lifecyclectl("simulate", "--address", address, "wake")

        # 3. Not running: the push launches it in the background, the payload in its launch options.
        lifecyclectl("simulate", "--address", address, "terminate", "--app", "org.example.Counter")
        wait_for("counter-app to end", lambda: counter_state() in ("not-running", ""))
        say("counter-app is not running; sending a push")
        before = len(callbacks())
        say(lifecyclectl("push", "--gateway", gateway, "@" + token,
                         '{"aps":{"alert":{"title":"Counter","body":"Launched for a push"}},"increment":2}'))
        wait_for("the launch", lambda: any("didReceiveRemoteNotification" in c for c in callbacks()[before:]))
        wait_for("counter-app to be suspended", lambda: counter_state() == "suspended")
        for line in callbacks()[before:]:
            say("  counter-app: " + line)

        # 4. The fleet, as an operator sees it on the broker.
        fleet = ["--broker", broker, "--username", "operator", "--password-file", os.path.join(work, "operator.password")]
        say("lifecyclectl fleet devices:\n    " + lifecyclectl("fleet", "devices", *fleet).replace("\n", "\n    "))
        say("lifecyclectl fleet apps:\n    " + lifecyclectl("fleet", "apps", *fleet).replace("\n", "\n    "))

        print("\nThe timeline (lifecyclectl monitor):")
        for line in lines(os.path.join(work, "timeline.log")):
            print("  " + line)
        print("\nThe chain (lifecycled and gateway, push lines):")
        for name in ["gateway", "lifecycled"]:
            for line in lines(os.path.join(work, name + ".log")):
                if "push" in line and ("accepted" in line or "delivered" in line or "launched" in line or "201" in line):
                    print(f"  {name}: {line[line.find(']') + 2:] if ']' in line else line}")
        say("done")
    finally:
        processes.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
