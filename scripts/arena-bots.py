#!/usr/bin/env python3
"""An arena of CPU bots over HTTP, checked against its own games (issue 21).

Starts a server (or uses --server), registers a director and --bots players,
makes them bots playing with `uttt bot --become-bot --level N` (each with its
refresh token in UTTT_BOT_TOKEN), creates an arena of --duration-ms, joins
every bot, starts it, and while it runs goes berserk for a random share of
the players at the start of their games (some requests lose the race with
the bot's first move: 409 berserk_not_allowed, counted). When the arena has
finished and its last games have ended it reads every game and the
standings, and checks, for every player:

- the points in the standings equal the sum recomputed from the player's
  games (win 2, draw 1, loss 0; after two wins in a row 4 and 2 until a
  game that is not a win; a berserk win one more; games that ended after
  the end time score nothing), and each game's `points` say the same;
- wins, draws, losses and games add up;
- the player never sat in two games at once.

Exit status 0 when everything agrees. Standard library only.

    cargo build --release --locked
    python3 scripts/arena-bots.py --uttt target/release/uttt --bots 100
    # PostgreSQL + Redis: DATABASE_URL=postgres://… REDIS_URL=redis://… python3 scripts/arena-bots.py …

API.md allows arenas of 10 minutes to a day. A shorter --duration-ms (down
to 60000) starts the server with UTTT_ARENA_MIN_DURATION_MS set to it, the
operator's setting for short events; with --server, that server must allow it.
"""

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


def call(server, method, path, body=None, token=None, timeout=30):
    """One request under /api/v1; returns (status, json or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server + "/api/v1" + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read()
            return resp.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as err:
        text = err.read()
        try:
            return err.code, json.loads(text)
        except ValueError:
            return err.code, None


def must(result, *ok):
    status, body = result
    if status not in ok:
        raise SystemExit(f"unexpected {status}: {body}")
    return body


def ms(text):
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(uttt, data_dir, duration_ms):
    port = free_port()
    env = dict(os.environ)
    env.update({
        "UTTT_BIND": f"127.0.0.1:{port}",
        "UTTT_DATA_DIR": data_dir,
        "UTTT_REGISTER_LIMIT_PER_ADDRESS": "100000",
        "UTTT_LOGIN_LIMIT_PER_ADDRESS": "100000",
        "UTTT_LOG_FORMAT": "json",
        "RUST_LOG": env.get("RUST_LOG", "warn"),
    })
    if duration_ms < 600000:
        env["UTTT_ARENA_MIN_DURATION_MS"] = str(duration_ms)
    log_file = open(os.path.join(data_dir, "server.log"), "w")
    proc = subprocess.Popen([uttt, "serve"], env=env, stdout=log_file, stderr=log_file)
    server = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(server + "/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return proc, server
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        if proc.poll() is not None:
            raise SystemExit(f"the server exited; see {data_dir}/server.log")
        time.sleep(0.2)
    raise SystemExit("the server did not become ready")


def register(server, name):
    body = must(call(server, "POST", "/auth/register",
                     {"username": name, "password": "arena bots password " + name}), 201)
    return {"name": name, "id": body["player"]["id"], "access": body["access_token"],
            "refresh": body["refresh_token"]}


def paged(server, path):
    items, cursor = [], None
    while True:
        sep = "&" if "?" in path else "?"
        url = f"{path}{sep}limit=100" + (f"&cursor={cursor}" if cursor else "")
        page = must(call(server, "GET", url), 200)
        items.extend(page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            return items


def recompute(games, ends_at):
    """Points per player from the games alone (RULES.md, Arena)."""
    per_player = {}
    for g in games:
        for seat in ("x", "o"):
            per_player.setdefault(g[seat]["id"], []).append((g, seat))
    points, records, problems = {}, {}, []
    for pid, played in per_player.items():
        played.sort(key=lambda gs: ms(gs[0]["started_at"]))
        # Never two games at once: each starts after the previous one ended.
        for (a, _), (b, _) in zip(played, played[1:]):
            if a["ended_at"] is None or ms(b["started_at"]) < ms(a["ended_at"]):
                problems.append(f"{pid} sat in {a['match_id']} and {b['match_id']} at once")
        counted = [(g, s) for g, s in played
                   if g["ended_at"] is not None and ms(g["ended_at"]) <= ends_at]
        counted.sort(key=lambda gs: ms(gs[0]["ended_at"]))
        total, streak, w, d, l = 0, 0, 0, 0, 0
        for g, seat in counted:
            fire = 2 if streak >= 2 else 1
            if g["result"] == seat:
                p = 2 * fire + (1 if g["berserk"][seat] else 0)
                streak += 1
                w += 1
            elif g["result"] == "draw":
                p = 1 * fire
                streak = 0
                d += 1
            else:
                p = 0
                streak = 0
                l += 1
            total += p
            if g["points"][seat] != p:
                problems.append(f"{g['match_id']}: {seat} scored {g['points'][seat]}, recomputed {p}")
        for g, seat in played:
            if (g["ended_at"] is None or ms(g["ended_at"]) > ends_at) and g["points"][seat] is not None:
                problems.append(f"{g['match_id']} ended after the end but scored {g['points'][seat]}")
        points[pid] = total
        records[pid] = (w, d, l)
    return points, records, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uttt", default="target/release/uttt", help="the uttt binary (server and bots)")
    ap.add_argument("--server", help="use this running server instead of starting one")
    ap.add_argument("--bots", type=int, default=100)
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--duration-ms", type=int, default=600000)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--clock-ms", type=int, default=60000, help="each player's clock (no increment)")
    ap.add_argument("--berserk-share", type=float, default=0.2, help="share of game starts a player goes berserk")
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    data_dir = tempfile.mkdtemp(prefix="arena-bots-")
    server_proc = None
    server = args.server
    if not server:
        server_proc, server = start_server(args.uttt, data_dir, args.duration_ms)
    bots = []
    try:
        tag = format(rng.getrandbits(24), "06x")
        director = register(server, f"ad_{tag}")
        players = [register(server, f"ab_{tag}_{i}") for i in range(args.bots)]
        by_id = {p["id"]: p for p in players}
        log(f"registered {len(players)} players on {server}")
        arena = must(call(server, "POST", "/tournaments", {
            "name": f"Bots arena {tag}", "kind": "arena", "depth": args.depth,
            "duration_ms": args.duration_ms,
            "time_control": {"kind": "clock", "initial_ms": args.clock_ms, "increment_ms": 0},
        }, director["access"]), 201)
        tid = arena["id"]
        for p in players:
            must(call(server, "POST", f"/tournaments/{tid}/join", {}, p["access"]), 200)
        for p in players:
            env = dict(os.environ, UTTT_BOT_TOKEN=p["refresh"], RUST_LOG="warn")
            out = open(os.path.join(data_dir, f"bot-{p['name']}.log"), "w")
            bots.append(subprocess.Popen(
                [args.uttt, "bot", "--server", server, "--level", str(args.level), "--become-bot"],
                env=env, stdout=out, stderr=out))
        time.sleep(5)  # the bots log in, become bots and open their event streams
        started = must(call(server, "POST", f"/tournaments/{tid}/start", {}, director["access"]), 200)
        ends_at = ms(started["ends_at"])
        log(f"arena {tid} started with {args.bots} bots; ends at {started['ends_at']}")

        seen, tried, berserks, refused = set(), 0, 0, 0
        last_report = 0
        while True:
            t = must(call(server, "GET", f"/tournaments/{tid}"), 200)
            games = paged(server, f"/tournaments/{tid}/games")
            for g in games:
                if g["match_id"] in seen:
                    continue
                seen.add(g["match_id"])
                if g["result"] is None and rng.random() < args.berserk_share:
                    seat = rng.choice(["x", "o"])
                    who = by_id[g[seat]["id"]]
                    tried += 1
                    status, body = call(server, "POST", f"/tournaments/{tid}/berserk",
                                        {"match_id": g["match_id"]}, who["access"])
                    if status == 200:
                        berserks += 1
                    elif status == 409 and body and body.get("code") in ("berserk_not_allowed", "match_over"):
                        refused += 1
                    else:
                        raise SystemExit(f"berserk: {status} {body}")
            running = sum(1 for g in games if g["result"] is None)
            if time.time() - last_report > 30:
                log(f"{t['status']}: {len(games)} games, {running} being played, "
                    f"{berserks} berserks ({refused} too late)")
                last_report = time.time()
            if t["status"] == "finished" and running == 0:
                break
            time.sleep(0.5)
    finally:
        for b in bots:
            b.send_signal(signal.SIGTERM)
        for b in bots:
            try:
                b.wait(timeout=20)
            except subprocess.TimeoutExpired:
                b.kill()

    games = paged(server, f"/tournaments/{tid}/games")
    standings = paged(server, f"/tournaments/{tid}/standings")
    points, records, problems = recompute(games, ends_at)
    for s in standings:
        pid = s["player"]["id"]
        want = points.get(pid, 0)
        if s["score"] != want:
            problems.append(f"{s['player']['username']}: standings say {s['score']}, games say {want}")
        w, d, l = records.get(pid, (0, 0, 0))
        if (s["wins"], s["draws"], s["losses"], s["games"]) != (w, d, l, w + d + l):
            problems.append(f"{s['player']['username']}: record {s['wins']}/{s['draws']}/{s['losses']} "
                            f"in {s['games']}, games say {w}/{d}/{l}")
    ranked = [s["score"] for s in standings]
    if ranked != sorted(ranked, reverse=True):
        problems.append("the standings are not in points order")
    late = sum(1 for g in games if ms(g["ended_at"]) > ends_at)
    log(f"{len(games)} games ({late} ended after the end and did not score), "
        f"{berserks} berserks, {refused} berserks refused; "
        f"leader {standings[0]['player']['username']} with {standings[0]['score']} points, "
        f"{len(standings)} players checked")
    if server_proc:
        server_proc.send_signal(signal.SIGTERM)
        server_proc.wait(timeout=30)
    if problems:
        for p in [p for p in problems if "at once" not in p][:30] + [p for p in problems if "at once" in p][:20]:
            log("MISMATCH", p)
        log(f"{len(problems)} problems")
        sys.exit(1)
    log("every player's points equal the sum recomputed from its games")


if __name__ == "__main__":
    main()
