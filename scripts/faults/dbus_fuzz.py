"""dbus-fuzz: random and mutated method calls to every object lifecycled exports, from its own uid.

lifecycled runs with a broker configured (so the UnifiedPush distributor is exported too), with
--enable-simulate (but never Simulate("terminate") without an app: that stops lifecycled as asked),
and with two manifests (one a real hosted app, so that some calls reach a live
app). Each call is one of:

- guided (about half): a real member with its real signature and adversarial values: app ids valid
  and not, empty and 100 KB–2 MB strings, URLs, notification dictionaries with every key and NaN,
  infinite and huge dates, deep userInfo;
- the right member with a random signature (wrong types, extra or missing arguments, deep variants
  nested up to 60, NaN doubles, unix fds);
- random members, interfaces and object paths, Properties and Introspectable with odd arguments.

D-Bus cannot carry invalid UTF-8 (the bus checks it), so none is sent. Every call waits for its
reply (25 s at most: a call not answered in that time is counted as "no_reply", a finding).
lifecycled must still run, answer ListApps, and never restart. The error names are counted.
"""
import math
import os
import random
import time

import dbus
import dbus.lowlevel

import rig as R

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTED_APP = os.path.join(HERE, "hosted_app.py")
APPS = ["org.example.Fuzzed", "org.example.Idle"]
LC = "org.applifecycle.Lifecycled1"
D1, D2 = "org.unifiedpush.Distributor1", "org.unifiedpush.Distributor2"
METHODS = {
    (R.LIFECYCLED_PATH, LC): {
        "RegisterApp": "s", "ReportState": "ss", "ReportNotification": "ssa{sv}", "BackgroundTaskBegan": "sus",
        "BackgroundTaskEnded": "su", "OpenURL": "sa{sv}", "Launch": "sa{sv}", "Terminate": "s", "Post": "ssa{sv}",
        "Simulate": "sa{sv}", "GetState": "s", "ListApps": "", "ScheduleNotification": "sa{sv}",
        "CancelNotification": "ss", "ListNotifications": "s", "PresentNotification": "sa{sv}", "SetBadge": "sx",
        "SetIdleTimerDisabled": "sb", "ListManifests": "",
    },
    (R.DISTRIBUTOR_PATH, D1): {"Register": "sss", "Unregister": "s"},
    (R.DISTRIBUTOR_PATH, D2): {"Register": "a{sv}", "Unregister": "a{sv}"},
}
BASIC = "ybnqiuxtdsog"
NOTIFICATION_KEYS = ["identifier", "fireDate", "timeZone", "timeZoneOffset", "wallClock", "repeatInterval",
                     "alertTitle", "alertBody", "alertAction", "hasAction", "applicationIconBadgeNumber", "soundName",
                     "category", "userInfo", "actions", "app", "nextFireDate"]
# Simulate "terminate" without an "app" stops lifecycled as the host asked (exit 0): it is sent
# with an app only, so that the campaign does not end itself.
SIMULATIONS = ["sleep", "wake", "lock", "unlock", "terminate", "memory-warning", "time-change", "background-fetch",
               "session-inactive", ""]


class Fuzzer:
    def __init__(self, rng):
        self.rng = rng

    # -- values ------------------------------------------------------------------------------

    def string(self):
        r, rng = self.rng.random(), self.rng
        if r < 0.25:
            return rng.choice(APPS + ["org.example.Unknown", "", ".", "a", "org..x", "-org.x", "org.x-", "org.x.",
                                      "org/x", "org.example." + "a" * 300, "éé.ü", "org.unifiedpush.Distributor"])
        if r < 0.35:
            return rng.choice(["counter://x", "http://x", "file:///etc/passwd", "://", "x" * 9000, "a:" + "b" * 10,
                               "mailto:a@b", "javascript:alert(1)", "%00", "fuzz://\u2028"])
        if r < 0.42:
            return "x" * rng.choice([100_000, 300_000, 1_000_000, 2_000_000])
        if r < 0.6:
            return "".join(chr(rng.choice([rng.randint(1, 0x7f), rng.randint(0x80, 0xd7ff),
                                            rng.randint(0xe000, 0x10ffff)])) for _ in range(rng.randint(0, 40)))
        return rng.choice(["active", "inactive", "background", "suspended", "not-running", "foreground", "default",
                           "minute", "hour", "day", "week", "month", "year", "Europe/Berlin", "Nowhere/Land", "UTC"])

    def double(self):
        return self.rng.choice([math.nan, math.inf, -math.inf, 1e300, -1e300, 0.0, -0.0, 5e-324, 1.7976931348623157e308,
                                253402300800.0, -62135596800.0, 4102444800.0, time.time() + 3600,
                                self.rng.uniform(-1e12, 1e12)])

    def integer(self, bits, signed):
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        return self.rng.choice([lo, hi, 0, 1, -1 if signed else 2, self.rng.randint(lo, hi)])

    def basic(self, code):
        rng = self.rng
        if code == "y":
            return dbus.Byte(rng.randint(0, 255))
        if code == "b":
            return dbus.Boolean(rng.random() < 0.5)
        if code in "nqiuxt":
            bits, signed = {"n": (16, True), "q": (16, False), "i": (32, True), "u": (32, False), "x": (64, True),
                            "t": (64, False)}[code]
            return {"n": dbus.Int16, "q": dbus.UInt16, "i": dbus.Int32, "u": dbus.UInt32, "x": dbus.Int64,
                    "t": dbus.UInt64}[code](self.integer(bits, signed))
        if code == "d":
            return dbus.Double(self.double())
        if code == "s":
            return dbus.String(self.string())
        if code == "o":
            return dbus.ObjectPath(rng.choice(["/", "/org/applifecycle/Lifecycled1", "/a/b", "/x" * 200]))
        if code == "g":
            return dbus.Signature(rng.choice(["", "s", "a{sv}", "v" * 200, "(ii)"]))
        if code == "h":
            fd = os.open("/dev/null", os.O_RDONLY)
            try:
                return dbus.types.UnixFd(fd)  # holds a duplicate
            finally:
                os.close(fd)
        raise ValueError(code)

    def random_type(self, depth=0):
        rng = self.rng
        if depth > 3 or rng.random() < 0.55:
            return rng.choice(BASIC + ("h" if rng.random() < 0.02 else "s"))
        kind = rng.choice("av({")
        if kind == "a":
            return "a" + self.random_type(depth + 1)
        if kind == "v":
            return "v"
        if kind == "(":
            return "(" + "".join(self.random_type(depth + 1) for _ in range(rng.randint(1, 3))) + ")"
        return "a{" + rng.choice("sxuo") + self.random_type(depth + 1) + "}"

    def variant(self, depth):
        """A value for a `v`: any type, sometimes variants nested deeply."""
        rng = self.rng
        if rng.random() < 0.05:
            return dbus.String("deep", variant_level=rng.randint(2, 60))
        if rng.random() < 0.1:
            return dbus.Struct(("date", dbus.Double(self.double(), variant_level=1)), signature="sv", variant_level=1)
        t = self.random_type(depth + 1)
        value = self.value(t, depth + 1)
        return wrap_variant(value, t)

    def value(self, t, depth=0):
        rng = self.rng
        if t in BASIC or t == "h":
            return self.basic(t)
        if t == "v":
            return self.variant(depth)
        if t.startswith("a{"):
            key, inner = t[2], t[3:-1]
            if key == "s" and inner == "v":
                return self.vardict(depth)
            count = rng.choice([0, 1, 3, rng.randint(0, 20)])
            return dbus.Dictionary({self.basic(key): self.value(inner, depth + 1) for _ in range(count)},
                                   signature=key + inner)
        if t.startswith("a"):
            inner = t[1:]
            count = rng.choice([0, 1, 3, rng.randint(0, 20), 5000 if inner in ("y", "i") else 2])
            return dbus.Array([self.value(inner, depth + 1) for _ in range(count)], signature=inner)
        if t.startswith("("):
            members = split_types(t[1:-1])
            return dbus.Struct(tuple(self.value(m, depth + 1) for m in members), signature=t[1:-1])
        raise ValueError(t)

    def vardict(self, depth=0, notification=False):
        rng = self.rng
        entries = {}
        keys = NOTIFICATION_KEYS if notification or rng.random() < 0.5 else [self.string()[:50] for _ in range(5)]
        for key in rng.sample(keys, rng.randint(0, len(keys))) if len(keys) > 1 else keys:
            if key in ("fireDate", "nextFireDate"):
                entries[key] = dbus.Struct(("date", dbus.Double(self.double(), variant_level=1)), signature="sv",
                                           variant_level=1)
            elif key == "userInfo" and depth < 6:
                entries[key] = dbus.Dictionary(self.vardict(depth + 1), signature="sv", variant_level=1)
            elif key == "identifier" and rng.random() < 0.7:
                entries[key] = dbus.String(f"fuzz-{rng.randint(0, 50)}", variant_level=1)
            else:
                entries[key] = self.variant(depth)
        return dbus.Dictionary(entries, signature="sv")

    # -- calls -------------------------------------------------------------------------------

    def guided_arguments(self, interface, member, signature):
        rng = self.rng
        values = []
        for i, t in enumerate(split_types(signature)):
            if t == "a{sv}":
                values.append(self.vardict(notification=member in ("ScheduleNotification", "PresentNotification")))
            elif t == "s" and i == 0 and member == "Simulate":
                values.append(dbus.String(rng.choice(SIMULATIONS)))
                if values[0] == "terminate":
                    arguments = self.vardict()
                    arguments["app"] = dbus.String(rng.choice(APPS + ["org.example.Unknown", ""]), variant_level=1)
                    return signature, values + [arguments]
            else:
                values.append(self.value(t))
        return signature, values

    def call(self):
        """(path, interface or None, member, signature, values, kind)."""
        rng = self.rng
        (path, interface), methods = rng.choice(list(METHODS.items()))
        member = rng.choice(list(methods))
        r = rng.random()
        if r < 0.5:
            signature, values = self.guided_arguments(interface, member, methods[member])
            return path, interface, member, signature, values, "guided"
        if r < 0.8:
            types = [self.random_type() for _ in range(rng.randint(0, 4))]
            return path, interface, member, "".join(types), [self.value(t) for t in types], "wrong-signature"
        kind = rng.random()
        if kind < 0.3:
            interface = "org.freedesktop.DBus.Properties"
            member = rng.choice(["Get", "GetAll", "Set"])
        elif kind < 0.4:
            interface, member = "org.freedesktop.DBus.Introspectable", "Introspect"
        elif kind < 0.6:
            interface = None
        elif kind < 0.8:
            member = rng.choice(["Nope", "registerApp", "X" * 255, "Register_", "A"])
        else:
            path = rng.choice(["/", "/org", "/org/applifecycle", "/org/applifecycle/Lifecycled1/x", "/x"])
        types = [self.random_type() for _ in range(rng.randint(0, 3))]
        return path, interface, member, "".join(types), [self.value(t) for t in types], "random-member"


def wrap_variant(value, t):
    """The value marked as a variant (dbus-python: variant_level)."""
    try:
        value.variant_level = 1
        return value
    except (AttributeError, TypeError):
        pass
    kind = type(value)
    if isinstance(value, dbus.Dictionary):
        return dbus.Dictionary(value, signature=value.signature, variant_level=1)
    if isinstance(value, dbus.Array):
        return dbus.Array(value, signature=value.signature, variant_level=1)
    if isinstance(value, dbus.Struct):
        return dbus.Struct(value, signature=value.signature, variant_level=1)
    if isinstance(value, dbus.types.UnixFd):
        return dbus.String("fd", variant_level=1)
    return kind(value, variant_level=1)


def split_types(signature):
    """The complete types of a signature."""
    types, i = [], 0
    while i < len(signature):
        j = end_of_type(signature, i)
        types.append(signature[i:j])
        i = j
    return types


def end_of_type(signature, i):
    c = signature[i]
    if c == "a":
        return end_of_type(signature, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        j = i + 1
        while signature[j] != close:
            j = end_of_type(signature, j)
        return j + 1
    return i + 1


def run(build, calls=20000, seed=None, keep=False, reply_timeout=25.0):
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    fuzzer = Fuzzer(rng)
    started = time.monotonic()
    with R.Rig("dbus-fuzz", build, keep=keep) as rig:
        _, address = rig.start_bus()
        _, _, config = rig.start_fleet_broker()
        apps = rig.path("apps")
        R.write_manifest(apps, APPS[0], "/usr/bin/python3", [HOSTED_APP, rig.path("app.log")])
        R.write_manifest(apps, APPS[1], "/usr/bin/sleep", ["300"])
        daemon = rig.start_lifecycled(address, apps, rig.path("state"), config, extra=["--enable-simulate"])
        connection = R.bus_connection(address)
        R.wait_for("lifecycled to own its name", lambda: R.name_owner(connection, R.LIFECYCLED_BUS_NAME))
        owner = R.name_owner(connection, R.LIFECYCLED_BUS_NAME)
        R.wait_for("the distributor's name", lambda: R.name_owner(connection, R.DISTRIBUTOR_BUS_NAME))

        errors, kinds, unsendable, no_reply, replies, slowest = {}, {}, 0, [], 0, 0.0
        owner_changes, client_drops, previous = 0, [], None
        for n in range(calls):
            path, interface, member, signature, values, kind = fuzzer.call()
            kinds[kind] = kinds.get(kind, 0) + 1
            try:
                message = dbus.lowlevel.MethodCallMessage(R.LIFECYCLED_BUS_NAME, path, interface, member)
                if signature:
                    message.append(*values, signature=signature)
            except Exception:
                unsendable += 1  # dbus-python refused to build it (too deep, too large): not sent
                continue
            begin = time.monotonic()
            try:
                connection.send_message_with_reply_and_block(message, reply_timeout)
                replies += 1
            except dbus.exceptions.DBusException as error:
                name = error.get_dbus_name() or "unknown"
                if name == "org.freedesktop.DBus.Error.NoReply":
                    no_reply.append({"n": n, "member": member, "signature": signature[:80], "kind": kind})
                if name == "org.freedesktop.DBus.Error.Disconnected":
                    # The bus dropped this client (not lifecycled): note what it sent, reconnect.
                    client_drops.append({"n": n, "path": path, "interface": interface, "member": member,
                                         "signature": signature[:120], "kind": kind,
                                         "previous": previous})
                    connection = R.bus_connection(address)
                errors[name] = errors.get(name, 0) + 1
            previous = {"member": member, "signature": signature[:120], "kind": kind}
            slowest = max(slowest, time.monotonic() - begin)
            if n % 1000 == 999:
                current = R.name_owner(connection, R.LIFECYCLED_BUS_NAME)
                if current != owner:
                    owner_changes += 1
                    owner = current
                if daemon.poll() is not None:
                    break
        alive = daemon.poll() is None
        list_apps_ok = False
        try:
            apps_now = connection.call_blocking(R.LIFECYCLED_BUS_NAME, R.LIFECYCLED_PATH, LC, "ListApps", "", [],
                                                timeout=10)
            list_apps_ok = isinstance(apps_now, dbus.Array)
        except dbus.exceptions.DBusException as error:
            errors["final ListApps: " + (error.get_dbus_name() or "")] = 1
        rss_kib = None
        try:
            with open(f"/proc/{daemon.pid}/status") as f:
                rss_kib = int(next(line for line in f if line.startswith("VmRSS")).split()[1])
        except (OSError, StopIteration):
            pass
        exit_status = rig.stop(daemon)
        log = R.read_lines(rig.path("lifecycled.log"))
        result = {
            "campaign": "dbus-fuzz", "seed": seed, "calls": calls - unsendable, "built_but_unsendable": unsendable,
            "kinds": kinds, "replies": replies, "errors": sum(errors.values()), "error_names": errors,
            "no_reply": len(no_reply), "no_reply_samples": no_reply[:5], "slowest_reply_seconds": round(slowest, 3),
            "lifecycled_up": alive and list_apps_ok and owner_changes == 0, "owner_changes": owner_changes,
            "client_dropped_by_bus": len(client_drops), "client_drop_samples": client_drops[:5],
            "lifecycled_rss_kib_at_end": rss_kib, "exit_status_on_sigterm": exit_status,
            "log_errors": sum(1 for line in log if " error " in line or " critical " in line),
            "log_fatal": [line for line in log if "Fatal error" in line or "fatalError" in line][:5],
            "seconds": round(time.monotonic() - started, 1),
        }
        result["ok"] = result["lifecycled_up"] and not no_reply and exit_status == 0
        return result
