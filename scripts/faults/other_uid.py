"""other-uid: nobody but lifecycled's own user gets in (issue 16, defect 1).

lifecycled runs as root with a broker configured (so it also exports the UnifiedPush distributor).
The campaign introspects every object lifecycled exports, from "/", and builds a call for every
method of every interface that is not one of the bus's standard ones, plus Properties Get, GetAll
and Set for each interface and property, with plausible arguments (a real app id with a manifest,
a running app, a real connector name). A client run with
`setpriv --reuid=65534 --regid=65534 --clear-groups` makes every call: each must be refused with
org.freedesktop.DBus.Error.AccessDenied. The same plan is then run by the daemon's own uid as a
control: there no call may be refused with AccessDenied, which shows the calls were well-formed
enough to reach each method. Introspect and Peer (answered by the bus library, revealing nothing
but the interface) are called too and reported apart.
"""
import json
import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

import dbus

import rig as R

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTED_APP = os.path.join(HERE, "hosted_app.py")
VICTIM = "org.example.Victim"
STANDARD = ("org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer",
            "org.freedesktop.DBus.Properties")
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"

# Arguments that would do something if the caller were let in, by member; others by signature.
S, A = "s", "a{sv}"
OVERRIDES = {
    ("org.applifecycle.Lifecycled1", "ReportState"): [[S, VICTIM], [S, "active"]],
    ("org.applifecycle.Lifecycled1", "BackgroundTaskBegan"): [[S, VICTIM], ["u", 7], [S, "task"]],
    ("org.applifecycle.Lifecycled1", "OpenURL"): [[S, "victim://open"], [A, {}]],
    ("org.applifecycle.Lifecycled1", "Simulate"): [[S, "sleep"], [A, {}]],
    ("org.applifecycle.Lifecycled1", "ScheduleNotification"):
        [[S, VICTIM], [A, {"identifier": ["v:s", "planted"], "alertBody": ["v:s", "from another uid"]}]],
    ("org.applifecycle.Lifecycled1", "PresentNotification"):
        [[S, VICTIM], [A, {"identifier": ["v:s", "planted-now"], "alertBody": ["v:s", "from another uid"]}]],
    ("org.applifecycle.Lifecycled1", "ListNotifications"): [[S, ""]],
    ("org.applifecycle.Lifecycled1", "SetBadge"): [[S, VICTIM], ["x", 42]],
    ("org.unifiedpush.Distributor1", "Register"):
        [[S, "org.example.ForeignConnector"], [S, "foreign-token"], [S, "foreign"]],
    ("org.unifiedpush.Distributor1", "Unregister"): [[S, "foreign-token"]],
    ("org.unifiedpush.Distributor2", "Register"):
        [[A, {"service": ["v:s", "org.example.ForeignConnector"], "token": ["v:s", "foreign-token-2"],
              "description": ["v:s", "foreign"]}]],
    ("org.unifiedpush.Distributor2", "Unregister"): [[A, {"token": ["v:s", "foreign-token-2"]}]],
}
GENERIC = {"s": [S, VICTIM], "u": ["u", 1], "x": ["x", 1], "b": ["b", True], "a{sv}": [A, {}]}


def split_signature(signature):
    """The complete types of a signature of the kinds lifecycled uses (s, u, x, b, a{sv})."""
    types, i = [], 0
    while i < len(signature):
        if signature.startswith("a{sv}", i):
            types.append("a{sv}")
            i += 5
        else:
            types.append(signature[i])
            i += 1
    return types


def introspect_tree(connection, bus_name, path="/", seen=None):
    """{path: {interface: {"methods": {name: in_signature}, "properties": [names]}}} from `path` down."""
    seen = {} if seen is None else seen
    xml = connection.call_blocking(bus_name, path, "org.freedesktop.DBus.Introspectable", "Introspect", "", [])
    root = ET.fromstring(str(xml))
    interfaces = {}
    for interface in root.findall("interface"):
        methods = {m.get("name"): "".join(a.get("type") for a in m.findall("arg") if a.get("direction", "in") == "in")
                   for m in interface.findall("method")}
        interfaces[interface.get("name")] = {"methods": methods,
                                             "properties": [p.get("name") for p in interface.findall("property")]}
    if interfaces:
        seen[path] = interfaces
    for node in root.findall("node"):
        child = (path.rstrip("/") + "/" + node.get("name"))
        introspect_tree(connection, bus_name, child, seen)
    return seen


def build_plan(tree, bus_name):
    plan, informational = [], []
    for path, interfaces in sorted(tree.items()):
        for interface, members in sorted(interfaces.items()):
            if interface in STANDARD:
                continue
            for member, signature in sorted(members["methods"].items()):
                arguments = OVERRIDES.get((interface, member)) or [GENERIC[t] for t in split_signature(signature)]
                plan.append({"bus_name": bus_name, "path": path, "interface": interface, "member": member,
                             "signature": signature, "arguments": arguments})
            props = "org.freedesktop.DBus.Properties"
            plan.append({"bus_name": bus_name, "path": path, "interface": props, "member": "GetAll",
                         "signature": "s", "arguments": [[S, interface]], "of": interface})
            for name in members["properties"]:
                plan.append({"bus_name": bus_name, "path": path, "interface": props, "member": "Get",
                             "signature": "ss", "arguments": [[S, interface], [S, name]], "of": f"{interface}.{name}"})
                plan.append({"bus_name": bus_name, "path": path, "interface": props, "member": "Set",
                             "signature": "ssv", "arguments": [[S, interface], [S, name], ["v:s", "x"]],
                             "of": f"{interface}.{name}"})
        informational.append({"bus_name": bus_name, "path": path, "interface": "org.freedesktop.DBus.Peer",
                              "member": "Ping", "signature": "", "arguments": []})
        informational.append({"bus_name": bus_name, "path": path, "interface": "org.freedesktop.DBus.Introspectable",
                              "member": "Introspect", "signature": "", "arguments": []})
    return plan, informational


def run_plan(rig, address, plan, as_other_uid):
    client = rig.path("other_uid_client.py")
    shutil.copy(os.path.join(HERE, "other_uid_client.py"), client)
    os.chmod(client, 0o755)
    argv = ["/usr/bin/python3", client]
    if as_other_uid:
        argv = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + argv
    result = subprocess.run(argv, input=json.dumps(plan), capture_output=True, text=True, timeout=300,
                            env={"DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"}, cwd="/")
    if result.returncode != 0:
        raise R.CampaignError(f"the client failed ({result.returncode}): {result.stderr[-1000:]}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def run(build, keep=False):
    started = time.monotonic()
    with R.Rig("other-uid", build, keep=keep) as rig:
        _, address = rig.start_bus()
        _, _, config = rig.start_fleet_broker()
        apps = rig.path("apps")
        R.write_manifest(apps, VICTIM, "/usr/bin/python3", [HOSTED_APP, rig.path("victim.log")])
        daemon = rig.start_lifecycled(address, apps, rig.path("state"), config, extra=["--enable-simulate"])
        connection = R.bus_connection(address)
        R.wait_for("lifecycled to own its name", lambda: R.name_owner(connection, R.LIFECYCLED_BUS_NAME))
        R.wait_for("the distributor's name", lambda: R.name_owner(connection, R.DISTRIBUTOR_BUS_NAME))
        lifecycled = dbus.Interface(connection.get_object(R.LIFECYCLED_BUS_NAME, R.LIFECYCLED_PATH),
                                    R.LIFECYCLED_INTERFACE)
        lifecycled.Launch(VICTIM, dbus.Dictionary({}, signature="sv"))
        R.wait_for("the victim app to be active",
                   lambda: any(str(e[0]) == VICTIM and str(e[1]) == "active" for e in lifecycled.ListApps()), 20)
        tree = introspect_tree(connection, R.LIFECYCLED_BUS_NAME)
        plan, informational = build_plan(tree, R.LIFECYCLED_BUS_NAME)
        foreign = run_plan(rig, address, plan + informational, as_other_uid=True)
        foreign_main, foreign_info = foreign[:len(plan)], foreign[len(plan):]
        notifications_after = [dict(n) for n in lifecycled.ListNotifications("")]
        victim_still_active = any(str(e[0]) == VICTIM and str(e[1]) == "active" for e in lifecycled.ListApps())
        control = run_plan(rig, address, plan, as_other_uid=False)
        daemon_alive = daemon.poll() is None
        rig.stop(daemon)

        refused = [r for r in foreign_main if r["result"] == ACCESS_DENIED]
        not_refused = [r for r in foreign_main if r["result"] != ACCESS_DENIED]
        # App-only methods refuse a caller that is not the app's registered process with
        # AccessDenied too; only a refusal for the caller's uid would mean the control failed.
        control_denied = [r for r in control if r["result"] == ACCESS_DENIED and "uid" in r.get("message", "")]
        by_interface = {}
        for r in foreign_main:
            key = r["interface"]
            counts = by_interface.setdefault(key, {"calls": 0, "refused": 0})
            counts["calls"] += 1
            counts["refused"] += r["result"] == ACCESS_DENIED
        result = {
            "campaign": "other-uid", "objects": sorted(tree),
            "interfaces": sorted({i for p in tree.values() for i in p if i not in STANDARD}),
            "calls": len(foreign_main), "refused": len(refused), "not_refused": len(not_refused),
            "by_interface": by_interface, "not_refused_calls": not_refused,
            "refusal_sample": refused[0] if refused else None,
            "standard_interfaces_as_other_uid": [
                {"path": r["path"], "member": f"{r['interface']}.{r['member']}", "result": r["result"]}
                for r in foreign_info],
            "planted_notifications": sum(1 for n in notifications_after if str(n.get("identifier", "")).startswith("planted")),
            "victim_still_active": victim_still_active,
            "control_same_uid_calls": len(control), "control_same_uid_access_denied": len(control_denied),
            "control_results": sorted({r["result"] for r in control}),
            "control_other_access_denied": [f"{r['interface']}.{r['member']}: {r.get('message', '')}"
                                            for r in control if r["result"] == ACCESS_DENIED],
            "lifecycled_alive_at_end": daemon_alive, "seconds": round(time.monotonic() - started, 1),
        }
        result["ok"] = (not not_refused and not control_denied and result["planted_notifications"] == 0
                        and victim_still_active and len(result["interfaces"]) >= 3)
        return result
