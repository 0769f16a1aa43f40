"""Targets and tables of ``bench/load.py`` (issue 11), from its report dict.

``evaluate`` checks each target on the measured figures; ``markdown`` writes the table
that ``bench/load.py`` puts between ``<!-- load:begin -->`` and ``<!-- load:end -->``
(``tools/doc_sections.py``: docs/robustness.md).
"""
from __future__ import annotations

from typing import List, Optional

#: (reply solve_time / in-process solve) p50, and round trip over the in-process solve.
SOLVE_TIME_RATIO = 1.3
ADDED_P50_MS, ADDED_P99_MS = 0.5, 1.5
FOUR_CLIENTS_P50_MS = 2.0
WORST_GAP_MS = 20.0
CANCEL_P99_MS = 50.0
RSS_GROWTH_PERCENT = 5.0


def _target(rows: list, name: str, measured: Optional[float], limit: float,
            text: str, below: bool = True) -> None:
    if measured is None:
        return
    met = measured <= limit if below else measured < limit
    rows.append({"target": name, "limit": limit, "measured": round(measured, 3),
                 "met": bool(met), "text": text})


def _latency_targets(rows: list, part: dict, when: str) -> None:
    one, four = part.get("single_client"), part.get("four_clients")
    if one and "in_process_solve_ms" in one:
        core, rtt = one["in_process_solve_ms"], one["round_trip_ms"]
        _target(rows, f"{when}one client: reply solve_time p50 / in-process solve p50",
                one["reply_solve_time_ms"]["p50"] / core["p50"], SOLVE_TIME_RATIO,
                f"<= {SOLVE_TIME_RATIO}x")
        _target(rows, f"{when}one client: round trip p50 - in-process solve p50 [ms]",
                rtt["p50"] - core["p50"], ADDED_P50_MS, f"<= {ADDED_P50_MS} ms")
        _target(rows, f"{when}one client: round trip p99 - in-process solve p99 [ms]",
                rtt["p99"] - core["p99"], ADDED_P99_MS, f"<= {ADDED_P99_MS} ms")
    if four:
        _target(rows, f"{when}4 clients: lost replies", four["lost"], 0, "0")
        _target(rows, f"{when}4 clients: round trip p50 [ms]", four["round_trip_ms"]["p50"],
                FOUR_CLIENTS_P50_MS, f"<= {FOUR_CLIENTS_P50_MS} ms")


def evaluate(report: dict) -> List[dict]:
    """Each issue-11 target whose part ran: name, limit, measured value, met."""
    rows: List[dict] = []
    _latency_targets(rows, report, "")
    stream = report.get("with_joint_states")
    if stream:
        _latency_targets(rows, stream, "joint_states 1 kHz: ")
        _target(rows, "joint_states 1 kHz: worst gap between callbacks [ms]",
                stream["joint_states"]["node_worst_gap_ms"], WORST_GAP_MS,
                f"<= {WORST_GAP_MS:g} ms")
    if report.get("cancel"):
        _target(rows, "cancel -> result p99 [ms]",
                report["cancel"]["cancel_to_result_ms"].get("p99"), CANCEL_P99_MS,
                f"<= {CANCEL_P99_MS:g} ms")
    if report.get("soak"):
        _target(rows, "soak: RSS growth after warm-up [%]",
                report["soak"]["memory"]["growth_percent"], RSS_GROWTH_PERCENT,
                f"< {RSS_GROWTH_PERCENT:g} %", below=False)
    return rows


def _p(figures: dict) -> str:
    return f"{figures['p50']:.3f} / {figures['p99']:.3f}" if figures else "-"


def _latency_rows(part: dict, when: str) -> List[str]:
    rows = []
    one = part.get("single_client")
    if one:
        rows.append(f"| {when}one client, {one['answered']} calls | {_p(one['round_trip_ms'])}"
                    f" | {_p(one['reply_solve_time_ms'])} | "
                    f"{_p(one.get('in_process_compute_ik_ms', {}))} | "
                    f"{_p(one.get('in_process_solve_ms', {}))} | {one['lost']} |")
    four = part.get("four_clients")
    if four:
        rows.append(f"| {when}{four['clients']} clients x {four['requests'] // four['clients']}"
                    f" | {_p(four['round_trip_ms'])} | {_p(four['reply_solve_time_ms'])} | "
                    f"- | - | {four['lost']} |")
    action = part.get("action")
    if action:
        rows.append(f"| {when}action, {action['goals']} goals (goal -> result) | "
                    f"{_p(action['goal_to_result_ms'])} | "
                    f"{_p(action['result_solve_time_ms'])} | - | - | {action['lost']} |")
    return rows


def _floor_rows(part: dict, when: str) -> List[str]:
    one = part.get("single_client") or {}
    rows = [("`get_parameters` of the node", "get_parameters_round_trip_ms"),
            ("Empty service of a bare rclpy server (executor + DDS floor)",
             "empty_service_round_trip_ms"),
            ("ComputeIK echo of a bare rclpy server (this interface's floor)",
             "echo_compute_ik_round_trip_ms")]
    out = [f"| {when}{text}, after each call | {_p(one[key])} | - | - | - | - |"
           for text, key in rows if one.get(key)]
    node, client = one.get("message_conversions_node_ms"), one.get(
        "message_conversions_client_ms")
    if node and client:
        out.append(f"| {when}rclpy message conversions of each call, in-process: node side "
                   f"{_p(node)}, client side {_p(client)} | - | - | - | - | - |")
    return out


def floor_note(part: dict) -> str:
    """How far the one client's round trip is above the floors, in words [ms, p50]."""
    one = part.get("single_client") or {}
    if not one.get("echo_compute_ik_round_trip_ms") or not one.get("in_process_solve_ms"):
        return ""
    echo, empty = one["echo_compute_ik_round_trip_ms"]["p50"], \
        one["empty_service_round_trip_ms"]["p50"]
    core, rtt = one["in_process_solve_ms"]["p50"], one["round_trip_ms"]["p50"]
    conv = one["message_conversions_node_ms"]["p50"] + \
        one["message_conversions_client_ms"]["p50"]
    left = ADDED_P50_MS - echo
    room = (f"so even a node adding nothing to the core's {core:.3f} ms solve would be "
            f"{echo:.3f} ms above it, against the {ADDED_P50_MS} ms target" if left <= 0 else
            f"so the {ADDED_P50_MS} ms target leaves a node {left:.3f} ms of its own work "
            f"above the echo besides the core's {core:.3f} ms solve")
    return (f"Floors (p50): a bare rclpy server answers Empty in {empty:.3f} ms and "
            f"ComputeIK, with no work, in {echo:.3f} ms (its messages' conversions "
            f"alone: {conv:.3f} ms in-process, both sides); {room}. "
            f"The node's round trip is {rtt:.3f} ms: "
            f"{rtt - echo:.3f} ms above the echo, of which the reply's solve_time "
            f"{one['reply_solve_time_ms']['p50']:.3f} ms.{_idle_note(one)}")


def _idle_note(one: dict) -> str:
    """Compare the in-process solve after one round trip idle with the reply's [ms]."""
    idle = one.get("in_process_solve_after_idle_ms")
    if not idle:
        return ""
    core, reply = one["in_process_solve_ms"]["p50"], one["reply_solve_time_ms"]["p50"]
    return (f" The same in-process solve after sleeping one round trip first (the idle "
            f"gap the node has between one client's calls) takes {idle['p50']:.3f} ms "
            f"({idle['p50'] / core:.2f}x the {core:.3f} ms timed right after each call); "
            f"the reply's solve_time is {reply / idle['p50']:.2f}x that.")


def _other_rows(report: dict) -> List[str]:
    rows = []
    cancel, soak = report.get("cancel"), report.get("soak")
    if cancel:
        rows.append(f"| cancel -> result, {cancel['cancels']} goals | "
                    f"{_p(cancel['cancel_to_result_ms'])} | - | - | - | - |")
    if soak:
        rows.append(f"| soak, {soak['requests']} calls ({soak['clients']} clients), RSS "
                    f"{soak['memory']['rss_after_warmup_mb']} -> {soak['memory']['rss_end_mb']}"
                    f" MB | {_p(soak['round_trip_ms'])} | {_p(soak['reply_solve_time_ms'])} "
                    f"| - | - | {soak['lost']} |")
    return rows


def markdown(report: dict) -> str:
    """Return the docs table of one full run: latencies, then the targets."""
    m = report["machine"]
    load = m.get("load_average", [0.0])[0]
    end = m.get("load_average_at_end", [load])[0]
    lines = [f"`make load`, {report['date_utc']}, Panda, near-seed reachable requests "
             f"(`bench/load_clients.request_maker`); {m.get('cpu', '?')}, "
             f"{m.get('cores', '?')} cores shared with other work (1-min load average "
             f"{load:.2f} at start, {end:.2f} at end); clients in their own processes "
             "(rclpy EventsExecutor); " + _transport_text(report) + ". Milliseconds, p50 / "
             "p99; the in-process columns time the same requests in the client process right "
             "after each call.", "",
             "| part | round trip | reply solve_time | in-process compute_ik "
             "| in-process solve() | lost |", "|---|---|---|---|---|---|"]
    lines += _latency_rows(report, "") + _floor_rows(report, "")
    stream = report.get("with_joint_states")
    if stream:
        lines += _latency_rows(stream, "joint_states 1 kHz: ")
        lines += _floor_rows(stream, "joint_states 1 kHz: ")
    lines += _other_rows(report)
    note = floor_note(report)
    lines += ["", note] if note else []
    lines += ["", "| target (issue 11) | limit | measured | met |", "|---|---|---|---|"]
    lines += [f"| {t['target']} | {t['text']} | {t['measured']:g} | "
              f"{'yes' if t['met'] else '**no**'} |" for t in report["targets"]]
    if stream:
        js = stream["joint_states"]
        lines += ["", f"joint_states: the driver sent {js['publisher_sent']} messages at "
                  f"{js['publisher_hz']:g} Hz (its own worst send gap "
                  f"{js['publisher_worst_send_gap_ms']} ms); the node ran a median of "
                  f"{js['node_callbacks_per_s_median']:g} callbacks/s, at least "
                  f"{js['node_callbacks_per_s_min']} in any 1-s window."]
    return "\n".join(lines)


def _transport_text(report: dict) -> str:
    discovery_range = report.get("args", {}).get("discovery_range", "LOCALHOST")
    if discovery_range == "LOCALHOST":
        return "discovery LOCALHOST: every process on Fast DDS shared memory + UDPv4"
    return (f"discovery {discovery_range} (ROS's default): the node on UDPv4 "
            "(node/transport.py), clients and driver on Fast DDS's shared memory + UDPv4")
