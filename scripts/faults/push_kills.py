"""push-kills: pushes through the real gateway and broker while lifecycled is SIGKILLed and restarted.

mosquitto (persistence, the fleet ACL), lifecycle-push-gateway, lifecycled with a lifecycled.conf
pointing at both, and scripts/test/unifiedpush-connector.py as the app with --drop-repeated-ids: it
records every Message and, as this project's connector does, logs a repeated id as "MessageRepeat"
rather than delivering it. lifecycled acknowledges a push to a running app only after the app's
reply, so a SIGKILL between the two makes the broker send it again: repeats are expected and counted
(what a connector that keeps no ids would have seen twice); a Message delivered twice is a failure.

A sender POSTs N Web Push requests (RFC 8030/8291 heads, an aes128gcm-shaped body) to the gateway at
a steady rate; the gateway answers 201 with the message id in Location once the broker has PUBACKed
its QoS 1 publish: that is "acknowledged". Meanwhile lifecycled is killed with SIGKILL K times at
random moments (during delivery, during its start) and started again. At the end every acknowledged
id must have reached the connector exactly once.
"""
import http.client
import json
import os
import random
import signal
import struct
import threading
import time

import rig as R


def web_push_body(rng):
    """An aes128gcm-shaped body (RFC 8188 header: salt, rs, idlen 65, an uncompressed P-256 key id,
    then one record): what the gateway checks; it cannot decrypt, so the content is random."""
    return (rng.randbytes(16) + struct.pack(">I", 4096) + bytes([65]) + b"\x04" + rng.randbytes(64)
            + rng.randbytes(rng.randint(17, 200)))


def connector_calls(log):
    calls = []
    for line in R.read_lines(log):
        try:
            calls.append(json.loads(line))
        except ValueError:
            pass
    return calls


def run(build, pushes=5000, kills=30, seconds=90.0, seed=None, keep=False, say=print):
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    started = time.monotonic()
    with R.Rig("push-kills", build, keep=keep) as rig:
        _, address = rig.start_bus()
        http_port = R.free_port()
        gateway_url = f"http://127.0.0.1:{http_port}"
        # The device's lifecycled.conf names the gateway it is reached through.
        _, mqtt_port, config = rig.start_fleet_broker(endpoint_url=gateway_url, extra_broker_lines="keepalive = 10\n")
        with open(rig.path("gateway.password"), "w") as f:
            f.write("pw-gateway\n")
        rig.start("gateway", [rig.binary("lifecycle-push-gateway"), "--listen", f"127.0.0.1:{http_port}",
                              "--public-url", gateway_url, "--broker", f"mqtt://127.0.0.1:{mqtt_port}",
                              "--username", "gateway", "--password-file", rig.path("gateway.password")])
        R.wait_for("the gateway to listen", lambda: R.port_open(http_port))
        apps, state = rig.path("apps"), rig.path("lifecycled-state")
        os.makedirs(apps)
        client = R.bus_connection(address)
        daemon = rig.start_lifecycled(address, apps, state, config)
        R.wait_for("lifecycled to own its name", lambda: R.name_owner(client, R.LIFECYCLED_BUS_NAME))
        log = rig.path("connector.log")
        rig.start("connector", ["/usr/bin/python3", R.CONNECTOR_SCRIPT, "org.example.FaultConnector", log,
                                "--token", "push-kills-connector", "--drop-repeated-ids"], env={"DBUS_SESSION_BUS_ADDRESS": address})

        def endpoint():
            ends = [c for c in connector_calls(log) if c.get("call") == "NewEndpoint"]
            return ends[-1]["endpoint"] if ends else None
        R.wait_for("the connector's endpoint", endpoint, 30)
        token = endpoint().rsplit("/", 1)[1]

        acknowledged, refused, errors = [], {}, []
        lock = threading.Lock()
        headers = {"TTL": "86400", "Content-Encoding": "aes128gcm", "Content-Type": "application/octet-stream"}
        connection = [http.client.HTTPConnection("127.0.0.1", http_port, timeout=30)]

        def post(body):
            try:
                connection[0].request("POST", f"/push/{token}", body=body, headers=headers)
                response = connection[0].getresponse()
                response.read()
                return response.status, response.getheader("Location")
            except (OSError, http.client.HTTPException) as error:
                connection[0].close()
                connection[0] = http.client.HTTPConnection("127.0.0.1", http_port, timeout=30)
                return None, repr(error)

        # The gateway learns the registration from the broker's retained record: until then, 404.
        def first_push():
            status, location = post(web_push_body(rng))
            if status == 201:
                acknowledged.append(location.rsplit("/", 1)[1])
                return True
            return False
        R.wait_for("the gateway to know the registration", first_push, 30, 0.2)

        def sender():
            interval = seconds / pushes
            begin = time.monotonic()
            sender_rng = random.Random(seed + 1)
            for i in range(1, pushes):
                delay = begin + i * interval - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                status, location = post(web_push_body(sender_rng))
                with lock:
                    if status == 201:
                        acknowledged.append(location.rsplit("/", 1)[1])
                    elif status is None:
                        errors.append(location)
                    else:
                        refused[status] = refused.get(status, 0) + 1
        thread = threading.Thread(target=sender)
        thread.start()

        # SIGKILL at random moments across the sending window: the mean gap is window / kills, any
        # single gap from 0.1 s (often inside lifecycled's start) to twice the mean.
        kill_log, mean_gap = [], seconds / max(kills, 1)
        for k in range(kills):
            time.sleep(rng.uniform(0.1, 2 * mean_gap))
            delivered_before = sum(1 for c in connector_calls(log) if c.get("call") == "Message")
            rig.stop(daemon, signal.SIGKILL)
            kill_log.append({"kill": k + 1, "at": round(time.monotonic() - started, 3),
                             "delivered_before": delivered_before})
            R.wait_for("lifecycled's name to be released", lambda: not R.name_owner(client, R.LIFECYCLED_BUS_NAME))
            time.sleep(rng.uniform(0, 0.5))
            daemon = rig.start_lifecycled(address, apps, state, config)
        thread.join()
        sent_done = time.monotonic()

        # Drain: wait until every acknowledged id arrived, or no new id came for 60 s, or 10 minutes.
        ack_set = set(acknowledged)
        last_count, last_change = -1, time.monotonic()
        while time.monotonic() - sent_done < 600:
            ids = {c["id"] for c in connector_calls(log) if c.get("call") == "Message"}
            if ack_set <= ids:
                break
            if len(ids) != last_count:
                last_count, last_change = len(ids), time.monotonic()
            if time.monotonic() - last_change > 60:
                break
            time.sleep(0.5)
        time.sleep(2.0)  # a duplicate in flight would arrive now (bounded wait, for the record)
        ids = [c["id"] for c in connector_calls(log) if c.get("call") == "Message"]
        delivered = set(ids)
        lost = sorted(ack_set - delivered)
        duplicates = len(ids) - len(delivered)
        repeats = sum(1 for c in connector_calls(log) if c.get("call") == "MessageRepeat")
        duplicated_ids = sorted({i for i in ids if ids.count(i) > 1}) if duplicates else []
        unacknowledged_delivered = sorted(delivered - ack_set)
        daemon_alive = daemon.poll() is None
        rig.stop(daemon)
        result = {
            "campaign": "push-kills", "seed": seed, "pushes_sent": pushes, "send_seconds": seconds,
            "acknowledged": len(ack_set), "refused": refused, "send_errors": len(errors),
            "delivered": len(delivered), "lost": len(lost), "duplicates": duplicates,
            "repeats_dropped_by_the_connector": repeats,
            "delivered_not_acknowledged": len(unacknowledged_delivered), "kills": len(kill_log),
            "drain_seconds": round(time.monotonic() - sent_done, 1), "lifecycled_alive_at_end": daemon_alive,
            "seconds": round(time.monotonic() - started, 1),
            "lost_ids": lost[:20], "duplicated_ids": duplicated_ids[:20], "send_error_samples": errors[:5],
            "work": rig.work if keep else None,
        }
        result["ok"] = (result["lost"] == 0 and duplicates == 0 and not errors and not refused
                        and result["acknowledged"] == pushes)
        return result
